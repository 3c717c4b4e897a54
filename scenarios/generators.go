package scenarios

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gpusim/internal/spec"
	"gpusim/internal/units"
	"gpusim/models"
	"gpusim/sim"
)

// Workload generators expand a few lines of YAML into the threads, streams
// and ops the engine runs, so every generated op is visible in --json and the
// trace. Generated ids are hierarchical: "train/gpu0/s1/m0/fwd/L3".
//
//	training:  data-parallel (or ZeRO-3 sharded) training, one host thread per
//	           GPU, gradient buckets all-reduced (or reduce-scattered) on a
//	           communication stream, optionally fed by a data loader, and
//	           optionally tensor-parallel (Megatron-style) within groups, in
//	           pipeline stages (1F1B), and with mixture-of-experts layers
//	           spread over expert-parallel groups
//	pipeline:  pipeline-parallel stages on different GPUs, GPipe or 1F1B,
//	           activations and gradients sent between stages
//	inference: token generation (prefill, then decode steps) with a preset
//	           model, tensor-parallel within groups, decode steps as CUDA
//	           graphs or launched op by op (inference.go)

// gpuList reads "all", a count N (the first N GPUs), or a list of names.
func (b *builder) gpuList(n spec.Node) ([]int, bool) {
	if n.IsScalar() {
		s, _ := n.Scalar()
		if s == "all" {
			out := make([]int, len(b.m.GPUs))
			for i := range out {
				out[i] = i
			}
			return out, true
		}
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 || v > len(b.m.GPUs) {
			n.Errorf("gpus is all, a count from 1 to %d (the first N GPUs), or a list of GPU names; got %q", len(b.m.GPUs), s)
			return nil, false
		}
		out := make([]int, v)
		for i := range out {
			out[i] = i
		}
		return out, true
	}
	list, ok := n.Seq()
	if !ok {
		return nil, false
	}
	seen := map[int]bool{}
	var out []int
	for _, x := range list {
		s, ok := x.Name()
		if !ok {
			return nil, false
		}
		i := b.m.NodeIndex(s)
		if i < 0 || b.m.Nodes[i].Kind != sim.NodeGPU {
			x.Errorf("%q is not a GPU of topology %s; GPUs: %s", s, b.m.Name, b.gpuNames())
			return nil, false
		}
		g := b.m.Nodes[i].Index
		if seen[g] {
			x.Errorf("%s is listed twice", s)
			return nil, false
		}
		seen[g] = true
		out = append(out, g)
	}
	if len(out) == 0 {
		n.Errorf("needs at least one GPU")
		return nil, false
	}
	return out, true
}

// layer is one layer of a model: its parameters, the FLOPs of its forward
// pass per sample, and the activation bytes it reads and writes per sample.
// Under tensor parallelism each of its tpBlocks blocks (a transformer
// layer's attention and MLP: 2) ends with an all-reduce in the forward pass
// and one in the backward pass, of tpBytes per sample (given), or tpElems
// elements of the dtype (presets); a layer with neither is split without one.
type layer struct {
	name   string
	params float64
	flops  float64
	// masked is the part of flops that causal attention kernels skip (the
	// masked half of a preset block's attention products, 2 s^2 d): the
	// model FLOPs count it, as Megatron's and PaLM's MFU do; kernels
	// run flops - masked.
	masked      float64
	activations float64
	tpBytes     float64
	tpElems     float64
	tpBlocks    int
	// d is a preset block's d_model (0: a listed layer, the embedding or
	// the head).
	d float64
	// An MoE layer's experts (experts:): the parameters of the experts this
	// GPU holds, the FLOPs per sample they spend on the tokens routed to
	// them, and the values per sample each all-to-all sends.
	moe                       bool
	expertParams, expertFlops float64
	a2aElems                  float64
	// keep is the activation bytes per sample a layer keeps for its
	// backward pass where it is not activations (the head's logits).
	keep float64
	// edge marks a preset's embedding and head, which full recomputation
	// leaves out; noTPFwd and noTPBwd drop its tensor-parallel
	// collective from a pass (with pipeline stages the embedding's, on
	// the first stage, is the forward's, and the head's, on the last, the
	// backward's).
	edge, noTPFwd, noTPBwd bool
}

// Transformer presets: the GPT-3 family (Brown et al. 2020, "Language Models
// are Few-Shot Learners", Table 2.1: layers, d_model, attention heads
// (tensor parallelism splits them whole: Megatron-LM and vLLM require tensor
// to divide them); 2048-token context,
// 50257-token vocabulary). Per block: 12 d^2 parameters; forward FLOPs per
// sample of s tokens 24 d^2 s (2 per parameter per token) plus 4 s^2 d for
// attention, Q K^T and the scores times V (the model FLOPs; causal
// kernels run half of those, masked) (Narayanan et al. 2021,
// "Efficient Large-Scale Language Model Training on GPU Clusters using
// Megatron-LM", Appendix: 4 b s^2 h per layer forward; Kaplan et al. 2020,
// Table 1, counts 2 n_ctx d_attn per token, the first product only); activations 34 s d
// bytes per block in 16-bit training without recomputation (Korthikanti et
// al. 2022, "Reducing Activation Recomputation", eq. 1, without the attention
// scores that fused attention does not store). The LM head: V d parameters,
// 2 V d s FLOPs.
var transformerPresets = map[string][3]int{ // layers, d_model, heads
	"gpt3-125m": {12, 768, 12},
	"gpt3-350m": {24, 1024, 16},
	"gpt3-1.3b": {24, 2048, 24},
	"gpt3-2.7b": {32, 2560, 32},
	"gpt3-6.7b": {32, 4096, 32},
	"gpt3-13b":  {40, 5140, 40},
	"gpt3-175b": {96, 12288, 96},
}

// headsProblem is why tensor cannot split preset name's heads over a
// group of tensor GPUs out of gpus ("" if it can), with the tensor degrees
// that divide both.
func headsProblem(name string, tensor int64, gpus int) string {
	h := transformerPresets[name][2]
	if h == 0 || tensor < 1 || int64(h)%tensor == 0 { // tensor < 1: refused already
		return ""
	}
	return fmt.Sprintf("%d does not divide %s's %d attention heads, which tensor parallelism splits whole (Megatron-LM and vLLM refuse it); use one of %s", tensor, name, h, commonDivisors(gpus, h))
}

func presetNames() string {
	return "gpt3-125m, gpt3-350m, gpt3-1.3b, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b"
}

func transformer(layers, d int, seq float64) []layer {
	const vocab = 50257
	fd := float64(d)
	var out []layer
	for i := 0; i < layers; i++ {
		out = append(out, layer{
			name:        "L" + strconv.Itoa(i),
			params:      12 * fd * fd,
			flops:       24*fd*fd*seq + 4*seq*seq*fd,
			masked:      2 * seq * seq * fd,
			activations: 34 * seq * fd,
			// Megatron's tensor parallelism all-reduces each block's output,
			// s d values per sample (Shoeybi et al. 2019, "Megatron-LM",
			// section 3: two all-reduces in the forward pass of a layer and
			// two in the backward).
			tpElems:  seq * fd,
			tpBlocks: 2,
			d:        fd,
		})
	}
	// The embedding and LM head, vocabulary-parallel under tensor
	// parallelism: one all-reduce of s d values a pass (Megatron-LM's
	// VocabParallelEmbedding output forward, the head's input gradient
	// backward).
	// It keeps 4 s (d + V) bytes a sample for the backward pass, most of it
	// the fp32 logits (Korthikanti et al. 2022, section 4.3: 4 s b h / t x
	// (1 + v / h) for the output layer).
	out = append(out, layer{name: "head", params: vocab * fd, flops: 2 * vocab * fd * seq, activations: 2 * seq * fd, tpElems: seq * fd, tpBlocks: 1,
		keep: 4 * seq * (fd + vocab), edge: true})
	return out
}

// model reads a model: a preset name, or a list of layers. A list whose
// counts add up to more than most layers is read but not expanded: it
// returns no layers and the count, so that a count of 100,000 on each of
// many entries is refused (by the op limit) without its layers in memory.
// With tensor parallelism (tensor > 1) each listed layer must say what its
// all-reduces move (tensor_bytes).
func (b *builder) model(n spec.Node, seq float64, most int64, tensor int64) ([]layer, int64, bool) {
	if n.IsScalar() {
		s, _ := n.Scalar()
		p, ok := transformerPresets[s]
		if !ok {
			n.Errorf("unknown model %q; presets: %s (or a list of layers: {params, flops, activations})", s, presetNames())
			return nil, 0, false
		}
		out := transformer(p[0], p[1], seq)
		return out, int64(len(out)), true
	}
	list, ok := n.Seq()
	if !ok {
		return nil, 0, false
	}
	var out []layer
	total := int64(0)
	type madeAt struct {
		line  int
		named bool // by the file (not L<index>)
	}
	names := map[string]madeAt{} // layer name -> the layer that made it
	for _, x := range list {
		lm, ok := x.Map("name", "params", "flops", "activations", "count", "tensor_bytes")
		if !ok {
			return nil, 0, false
		}
		l := layer{name: "L" + strconv.Itoa(len(out)), tpBlocks: 2}
		if v, ok := lm.Get("name"); ok {
			l.name, _ = v.Name()
		}
		if v, ok := lm.Require("params", "the layer's parameter count"); ok {
			l.params, _ = v.Float(0, 1e15)
		}
		if v, ok := lm.Require("flops", "the forward pass's FLOPs per sample, such as 2 GFLOP"); ok {
			l.flops, _ = v.Quantity(units.FLOPs, spec.NonNeg)
		}
		if v, ok := lm.Get("activations"); ok {
			l.activations, _ = v.Quantity(units.Bytes, spec.NonNeg)
		}
		if v, ok := lm.Get("tensor_bytes"); ok {
			if l.tpBytes, ok = v.Quantity(units.Bytes, spec.NonNeg); ok && l.tpBytes > 1e15 {
				v.Errorf("%s per sample is more than gpusim's limit of 1 PB", units.Format(l.tpBytes, units.Bytes))
			}
		} else if tensor > 1 {
			x.Errorf("with tensor: %d each layer needs tensor_bytes: the bytes per sample each of its tensor-parallel all-reduces moves (two in its forward pass, two in its backward; 0 for a layer split without them)", tensor)
		}
		count := int64(1)
		if v, ok := lm.Get("count"); ok {
			count, _ = v.Int(1, 100000)
		}
		if total = satAdd(total, count); total > most {
			continue
		}
		clash := false
		for k := int64(0); k < count; k++ {
			c := l
			if count > 1 {
				c.name = l.name + "." + strconv.FormatInt(k, 10)
			}
			if at, seen := names[c.name]; seen && !clash && l.name != "" {
				// Said once for the layer: its ops would take the ids of
				// the other's.
				clash = true
				unnamed := ""
				if !at.named {
					unnamed = fmt.Sprintf(" (unnamed, so named %s by its place)", c.name)
				}
				x.Errorf("layer name %s is taken by the layer at line %d%s; layer names name their ops and must differ (count: N names a layer's copies NAME.0 to NAME.N-1)", c.name, at.line, unnamed)
			}
			_, named := lm.Get("name")
			names[c.name] = madeAt{x.Raw().Line, named}
			out = append(out, c)
		}
	}
	if total > most {
		return nil, total, true
	}
	if len(out) == 0 {
		n.Errorf("a model needs at least one layer")
		return nil, 0, false
	}
	return out, total, true
}

// satAdd and satMul are + and * of op counts, saturating at 1<<62 (as
// countOps does; countString says "more than 4.6e18").
func satAdd(a, b int64) int64 { return min(a+b, 1<<62) }

func satMul(a, b int64) int64 {
	if a > 0 && b > (1<<62)/a {
		return 1 << 62
	}
	return min(a*b, 1<<62)
}

// raise ends a message of ops past the limit: the limit may be raised,
// but not past its ceiling.
func (b *builder) raise() string {
	if b.opt.MaxOps >= MaxOpsCeiling {
		return " (the limit is at its ceiling, 2^36)"
	}
	return " or raise the limit (--max-ops)"
}

// checkOps refuses, at key (a thread's ops, a generator's key), what would
// expand to count ops past the op limit (or past Options.MemoryOps), alone
// or with the ops before it, before anything is expanded; what names the
// count to lower.
func (b *builder) checkOps(key spec.Node, count int64, what string) bool {
	if count > b.opt.MaxOps {
		key.Errorf("expands to %s ops, more than the limit of %d; lower %s%s", countString(count), b.opt.MaxOps, what, b.raise())
		return false
	}
	all := satAdd(int64(b.p.NumOps()), count)
	if all > b.opt.MaxOps {
		key.Errorf("the scenario expands to %s ops, more than the limit of %d; lower %s%s", countString(all), b.opt.MaxOps, what, b.raise())
		return false
	}
	if b.opt.MemoryOps > 0 && all > b.opt.MemoryOps {
		if b.memory == nil {
			b.memory = &MemoryError{File: b.file, Ops: all}
		}
		return false
	}
	return true
}

// stageCount is what the ops of a pipeline stage's GPUs depend on: how
// many GPUs, its layers, the ops a micro-step tensor parallelism adds to
// them, its gradient buckets, the sends and receives of its 1F1B schedule
// a step (comm), what full recomputation adds, and whether it loads the
// batches.
type stageCount struct {
	gpus, layers, tpExtra, buckets, comm int64
	// recompute is the ops of a micro-step's recomputation: a forward
	// pass of every layer but a preset's embedding and head, without
	// ZeRO-3's gather (the backward's serves it).
	recompute int64
	// limits is ZeRO-3's rate limiter's ops a micro-step: a wait before
	// each chunk layer's gather but the first two and an event record
	// after each layer's forward but the last two (2(n-2) a chunk of n).
	limits int64
	loader bool
}

// trainingStageOps is the number of ops training: expands to, as training
// below issues them, for each pipeline stage's GPUs (stageCount). On each
// GPU, each step has accum micro-steps of:
//
//	a forward and a backward kernel per layer, each after an all-gather
//	  and an event record and wait with zero3 (1 or 4 ops; the last
//	  layer's backward without them), and zero3's rate limiter
//	  (stageCount.limits);
//	with a data loader: an await, the batch's copy, an event record and
//	  wait, and a signal (5 ops);
//
//	with tensor parallelism, a layer of b blocks with all-reduces runs
//	  each pass as b kernels, each followed by an all-reduce: 2(2b-1)
//	  more ops a micro-step, or with sequence parallelism each between
//	  an all-gather and a reduce-scatter: 2(3b-1) (tpExtra sums them;
//	  in stages, a preset's embedding and head have them in one pass);
//	an MoE layer runs each pass as two kernels and two all-to-alls: 6
//	  more ops a micro-step;
//	with full recomputation, a third pass (a forward before each
//	  layer's backward but the embedding's and head's) without ZeRO-3's
//	  gather;
//
// and, once per step: on the last micro-step (on every one with zero2 or
// zero3), per gradient bucket an event record and wait and the collective
// (overlap: 3 per bucket), or one record and wait after the stage's last
// backward pass and then the buckets' collectives (2 + buckets), and the
// same for each MoE layer's expert gradients (3, or 1, each); a record
// and wait before the optimizer, the optimizer kernel (3); with zero1 or
// zero2 a record and wait, an all-gather per bucket and a record and wait
// (buckets + 4), or with overlap_param_gather a record and wait and an
// all-gather and an event record per bucket (2 + 2 buckets), and in each
// step after the first a wait per bucket; a device sync if
// sync_every_step; with pipeline stages, the sends and
// receives of the stage's 1F1B schedule, and on the first and last stages
// a record, a wait and the tied embedding's all-reduce. The data loader's
// workers (on the first stage) spend 3 ops (await, host work, signal) on
// each of the GPU's steps x accum batches.
func trainingStageOps(stages []stageCount, steps, accum, moeLayers int64, sharding string, overlap, overlapGather, syncEvery bool) int64 {
	total := int64(0)
	for _, c := range stages {
		gpu := trainingThreadOps(steps, accum, moeLayers, c, sharding, overlap, overlapGather, syncEvery)
		gpu = satAdd(gpu, satMul(steps, c.comm))
		if c.loader {
			gpu = satAdd(gpu, satMul(3, satMul(steps, accum)))
		}
		total = satAdd(total, satMul(c.gpus, gpu))
	}
	return total
}

// trainingThreadOps is the ops of one GPU's training thread (see
// trainingStageOps), without its data loader's and its pipeline sends.
func trainingThreadOps(steps, accum, moeLayers int64, c stageCount, sharding string, overlap, overlapGather, syncEvery bool) int64 {
	perLayer := int64(1)
	if sharding == "zero3" {
		perLayer = 4
	}
	rounds := int64(1) // of the buckets' collectives a step
	if sharding == "zero2" || sharding == "zero3" {
		rounds = accum
	}
	micro := satAdd(satAdd(satMul(2*perLayer, c.layers), c.tpExtra), satMul(6, moeLayers))
	if sharding == "zero3" && c.layers > 0 {
		micro -= 3 // the last layer's weights stay gathered for its backward
	}
	micro = satAdd(micro, satAdd(c.recompute, c.limits))
	if c.loader {
		micro = satAdd(micro, 5)
	}
	step := satMul(accum, micro)
	if overlap {
		step = satAdd(step, satMul(3, satAdd(satMul(rounds, c.buckets), moeLayers)))
	} else {
		step = satAdd(step, satAdd(satMul(rounds, satAdd(2, c.buckets)), moeLayers))
	}
	step = satAdd(step, 3)
	switch {
	case overlapGather:
		step = satAdd(step, satAdd(satMul(2, c.buckets), 2))
	case sharding == "zero1" || sharding == "zero2":
		step = satAdd(step, satAdd(c.buckets, 4))
	}
	if syncEvery {
		step = satAdd(step, 1)
	}
	total := satMul(steps, step)
	if overlapGather { // a wait a bucket in each step after the first
		total = satAdd(total, satMul(steps-1, c.buckets))
	}
	if sharding == "zero3" && !syncEvery && steps > 1 {
		// Each step but the last records its update, and the next
		// waits for it before its first (up to two) gathers.
		total = satAdd(total, satMul(steps-1, 1+min(2, c.layers)))
	}
	return total
}

// pipelineOps is the number of ops pipeline: expands to, as pipeline
// below issues them. Stage s has a neighbour before it (a = 1 if s > 0)
// and after it (c = 1 if s < p-1). Each step:
//
//	gpipe: per micro-batch a forward and a backward kernel, each with a
//	  receive from and a send to each neighbour there is: 2M(1+a+c);
//	1f1b: warm = min(p-s-1, M) warm-up forwards and as many cool-down
//	  backwards, each with its receive and send ((1+a+c) each); the
//	  M-warm steady iterations two kernels and two exchanges (send and
//	  receive paired into one op: c + a, the last iteration's second
//	  one a plain send), and one more receive (a) before them if there
//	  are any: M(2+a+c) + warm(a+c) + a[M > warm];
//	interleaved: see interleavedOps;
//
// and a device sync.
func pipelineOps(p, micro, steps int64, schedule string, chunks int64) int64 {
	total := int64(0)
	for s := int64(0); s < p; s++ {
		total = satAdd(total, stageOps(p, s, micro, schedule, chunks))
	}
	return satMul(steps, total)
}

// stageOps is the ops of one step of stage s of p (see pipelineOps).
func stageOps(p, s, micro int64, schedule string, chunks int64) int64 {
	a, c := int64(0), int64(0)
	if s > 0 {
		a = 1
	}
	if s < p-1 {
		c = 1
	}
	switch schedule {
	case "gpipe":
		return 2*micro*(1+a+c) + 1
	case "interleaved":
		return interleavedOps(p, s, micro, chunks) + 1
	}
	warm := min(p-s-1, micro)
	n := micro*(2+a+c) + warm*(a+c) + 1
	if micro > warm {
		n += a
	}
	return n
}

// interleavedOps is the ops of a step of stage s of p in an interleaved
// pipeline of v chunks and m micro-batches, but the sync: 2mv kernels,
// each with an event record after it; each of the 4mv sends and receives
// (2m fewer on the first stage, which neither receives its first chunk's
// input nor sends its gradient, and on the last, for its last chunk) with
// an event record and wait (3 ops); and a wait before each receive but
// the first pass's (stages after the first receive before their first).
func interleavedOps(p, s, m, v int64) int64 {
	recvFwd, recvBwd := m*v, m*v
	if s == 0 {
		recvFwd -= m
	}
	if s == p-1 {
		recvBwd -= m
	}
	transfers := 2 * (recvFwd + recvBwd) // as many sends as receives
	posts := recvFwd + recvBwd
	if s > 0 {
		posts--
	}
	return 4*m*v + 3*transfers + posts
}

// gen helps build generated threads.
type gen struct {
	b     *builder
	where string
}

func (g gen) stream(gpu int, name string) int { return g.b.streamFor(gpu, name) }

func (g gen) event(name string) int {
	if i, ok := g.b.events[name]; ok {
		return i
	}
	i := len(g.b.p.Events)
	g.b.events[name] = i
	g.b.p.Events = append(g.b.p.Events, name)
	return i
}

func (g gen) sem(name string, initial int, input bool) int {
	if i, ok := g.b.sems[name]; ok {
		return i
	}
	i := len(g.b.p.Semaphores)
	g.b.sems[name] = i
	g.b.p.Semaphores = append(g.b.p.Semaphores, sim.Semaphore{Name: name, Initial: initial, Input: input})
	return i
}

func (g gen) op(th *sim.Thread, id string, op sim.Op) {
	op.ID, op.Where = id, g.where
	if op.SMShare == 0 && op.Kind == sim.OpKernel {
		op.SMShare = 1
	}
	th.Ops = append(th.Ops, op)
}

// after makes stream to wait for the work issued so far on stream from.
func (g gen) after(th *sim.Thread, id string, from, to int) {
	e := g.event(id)
	g.op(th, id+"/record", sim.Op{Kind: sim.OpEventRecord, Stream: from, Event: e})
	g.op(th, id+"/wait", sim.Op{Kind: sim.OpEventWait, Stream: to, Event: e})
}

// training expands a training: block; key is its key, where a block that
// would expand past the op limit is refused.
func (b *builder) training(n, key spec.Node) {
	tm, ok := n.Map("gpus", "model", "seq", "batch", "dtype", "steps", "accumulation", "bucket", "overlap",
		"grad_dtype", "sharding", "optimizer_bytes_per_param", "sync_every_step", "dataloader", "algorithm", "protocol", "kernel_sm_share", "comm_sm_share", "tensor", "sequence_parallel", "experts", "recompute", "pipeline", "pipeline_bytes", "pipeline_chunks", "pipeline_split", "overlap_param_gather")
	if !ok {
		return
	}
	g := gen{b: b, where: n.Pos()}
	var gpus []int
	if x, ok := tm.Require("gpus", "the GPUs training: all, a count, or a list"); ok {
		gpus, ok = b.gpuList(x)
		if !ok {
			return
		}
	} else {
		return
	}
	seq := 2048.0
	if x, ok := tm.Get("seq"); ok {
		seq, _ = x.Float(1, 1e7)
	}
	// Tensor parallelism (Megatron-LM): groups of tensor consecutive GPUs of
	// the list each split every layer; data parallelism runs across the
	// groups, among the GPUs of the same place in them.
	tensor := int64(1)
	if x, ok := tm.Get("tensor"); ok {
		if tensor, ok = x.Int(1, int64(len(gpus))); ok && int64(len(gpus))%tensor != 0 {
			x.Errorf("%d does not divide the %d GPUs training into tensor-parallel groups; use one of %s", tensor, len(gpus), commonDivisors(len(gpus), len(gpus)))
		}
	}
	// Pipeline parallelism (Megatron-LM's 1F1B without interleaving): pipe
	// stages of consecutive GPUs, each of tensor x data-parallel GPUs and
	// consecutive layers; the micro-steps (accumulation) are its
	// micro-batches.
	pipe := int64(1)
	pipeX, hasPipe := tm.Get("pipeline")
	if hasPipe {
		// Said only when tensor divides the GPUs (else tensor said it).
		if pipe, ok = pipeX.Int(1, int64(len(gpus))); ok && tensor >= 1 && int64(len(gpus))%tensor == 0 && int64(len(gpus))%(tensor*pipe) != 0 {
			pipeX.Errorf("%d stages of tensor-parallel groups of %d do not divide the %d GPUs training; use one of %s", pipe, tensor, len(gpus), commonDivisors(len(gpus)/int(tensor), len(gpus)/int(tensor)))
		}
	}
	// Interleaved 1F1B (Megatron-LM's virtual pipeline stages): each
	// stage's GPUs hold chunks model chunks, virtual stages c p + s.
	chunks := int64(1)
	chunksX, hasChunks := tm.Get("pipeline_chunks")
	if hasChunks {
		chunks, _ = chunksX.Int(1, 1000)
	}
	// How the layers are split among the (virtual) stages: as evenly as
	// their count divides (Megatron-LM's default), or so that each
	// stage's compute time is as even as a contiguous split makes it.
	split := "even"
	splitX, hasSplit := tm.Get("pipeline_split")
	if hasSplit {
		split, _ = splitX.Enum("even", "balanced")
	}
	pipeBytes := -1.0 // what a stage sends the next a sample: a preset's s d values
	pipeBytesX, hasPipeBytes := tm.Get("pipeline_bytes")
	if hasPipeBytes {
		if pipeBytes, ok = pipeBytesX.Quantity(units.Bytes, spec.NonNeg); ok && pipeBytes > 1e15 {
			pipeBytesX.Errorf("%s a sample is more than gpusim's limit of 1 PB", units.Format(pipeBytes, units.Bytes))
		}
	}
	// Sequence parallelism (Korthikanti et al. 2022): each block's
	// all-reduce becomes an all-gather of its input and a reduce-scatter of
	// its output, and the activations between blocks are split too.
	seqPar := false
	if x, ok := tm.Get("sequence_parallel"); ok {
		if seqPar, ok = x.Bool(); ok && seqPar && tensor == 1 {
			x.Errorf("needs tensor: 2 or more: sequence parallelism splits the activations of tensor-parallel groups")
		}
	}
	var layers []layer
	var nLayers int64
	preset := false
	if x, ok := tm.Require("model", "a preset ("+presetNames()+") or a list of layers"); ok {
		preset = x.IsScalar()
		// Each layer is at least two ops (forward and backward kernels).
		if layers, nLayers, ok = b.model(x, seq, b.opt.MaxOps/2, tensor); !ok {
			return
		}
		// Said only when tensor's groups fit the GPUs and the stages (else
		// tensor or pipeline said so); the degrees offered divide a
		// stage's GPUs. (The default, 1, divides any heads.)
		if tx, given := tm.Get("tensor"); preset && given && tensor >= 1 && pipe >= 1 && int64(len(gpus))%(tensor*pipe) == 0 {
			name, _ := x.Scalar()
			if why := headsProblem(name, tensor, len(gpus)/int(pipe)); why != "" {
				tx.Errorf("%s", why)
				return
			}
		}
		if sx, given := tm.Get("seq"); preset && given && seq > gptPositions {
			b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("%s: training.seq: %g tokens, more than the GPT-3 presets' context of %d: they run as a model of the same shape with a longer context (attention's s^2 terms grow with it, and MFU counts them whole: it can pass 100%%)", sx.Pos(), seq, gptPositions))
		}
	} else {
		return
	}
	intField := func(key string, def, lo, hi int64) int64 {
		if x, ok := tm.Get(key); ok {
			v, _ := x.Int(lo, hi)
			return v
		}
		return def
	}
	batch := float64(intField("batch", 8, 1, 1<<20))
	steps := int(intField("steps", 2, 1, 100000))
	accum := int(intField("accumulation", 1, 1, 10000))
	dtype, ok := dtypeField(tm)
	if !ok {
		return
	}
	if dtype == models.INT8 {
		// Integer GEMMs serve quantized models; no framework trains in
		// them.
		x, _ := tm.Get("dtype")
		x.Errorf("int8 is for inference; a training computes in fp64, fp32, tf32, fp16, bf16 or fp8")
		return
	}
	// The gradients' dtype, what their all-reduces and reduce-scatters
	// move: the dtype's, but at least bf16 (FP8 training keeps and reduces
	// its gradients in bf16: Transformer Engine, Megatron-LM). fp32 is
	// PyTorch AMP's (its weights, so their gradients, stay fp32; autocast
	// computes in bf16) and Megatron-LM's --accumulate-allreduce-grads-in-fp32.
	gradType := dtype
	if dtype.Size() < 2 {
		gradType = models.BF16
	}
	if x, ok := tm.Get("grad_dtype"); ok {
		if s, ok := x.Scalar(); ok {
			g, ok := models.ParseDType(s)
			switch {
			case !ok:
				x.Errorf("unknown dtype %q; gradients are reduced in fp32, bf16, fp16 or fp64", s)
				return
			case g == models.TF32:
				x.Errorf("tf32 is stored as fp32; use fp32")
				return
			case g.Size() < 2:
				x.Errorf("%s: gradients are reduced in fp32, bf16, fp16 or fp64 (FP8 training reduces its gradients in bf16, the default)", s)
				return
			}
			gradType = g
		}
	}
	bucket := 25.0 * (1 << 20) // PyTorch DDP's default bucket_cap_mb
	if x, ok := tm.Get("bucket"); ok {
		bucket, _ = x.Quantity(units.Bytes, spec.StrictlyPos)
	}
	overlap := true
	if x, ok := tm.Get("overlap"); ok {
		overlap, _ = x.Bool()
	}
	// ZeRO (Rajbhandari et al. 2020): stage 1 shards the optimizer's
	// state over the data-parallel ranks (Megatron-LM's distributed
	// optimizer), stage 2 the gradients too, both reduce-scattering the
	// gradient buckets and all-gathering the updated parameters after the
	// optimizer; stage 3 (FSDP) shards the parameters too and gathers
	// each layer's before each pass.
	sharding := "none"
	if x, ok := tm.Get("sharding"); ok {
		// Other names for the stages, as FSDP and DeepSpeed users write
		// them: said with the stage they are.
		alias := map[string]string{"fsdp": "zero3 (FSDP's FULL_SHARD)", "full_shard": "zero3", "shard_grad_op": "zero2 (FSDP's SHARD_GRAD_OP)", "ddp": "none (plain data parallelism)", "no_shard": "none"}
		if v, isScalar := x.Scalar(); isScalar && alias[strings.ToLower(v)] != "" {
			x.Errorf("%q is not valid: write sharding: %s; expected one of none, zero1, zero2, zero3", v, alias[strings.ToLower(v)])
		} else {
			sharding, _ = x.Enum("none", "zero1", "zero2", "zero3")
		}
	}
	zero3 := sharding == "zero3"
	zeroOpt := sharding == "zero1" || sharding == "zero2"
	// Megatron-LM's --overlap-param-gather: the next step's forward pass
	// waits for each bucket's all-gather only where it first uses it.
	overlapGather := false
	if x, ok := tm.Get("overlap_param_gather"); ok {
		if overlapGather, ok = x.Bool(); ok && overlapGather && !zeroOpt {
			x.Errorf("overlap_param_gather needs sharding: zero1 or zero2, which all-gather the parameters after the optimizer")
		}
	}
	// Mixed-precision Adam keeps 16 bytes of state per parameter (ZeRO,
	// Rajbhandari et al. 2020: 2 + 2 + 12); the update reads and writes it.
	optBytes := 32.0
	if x, ok := tm.Get("optimizer_bytes_per_param"); ok {
		optBytes, _ = x.Float(0, 1e4)
	}
	syncEvery := true
	if x, ok := tm.Get("sync_every_step"); ok {
		syncEvery, _ = x.Bool()
	}
	algo, proto := "", ""
	if x, ok := tm.Get("algorithm"); ok {
		algo, _ = x.Enum(models.Algorithms...)
	}
	if x, ok := tm.Get("protocol"); ok {
		proto, _ = x.Enum(models.Protocols...)
	}
	kernelShare, commShare := 1.0, 0.0
	if x, ok := tm.Get("kernel_sm_share"); ok {
		kernelShare, _ = x.Float(1e-6, 1)
	}
	if x, ok := tm.Get("comm_sm_share"); ok {
		commShare, _ = x.Float(1e-6, 1)
	}
	var loader *loaderSpec
	if x, ok := tm.Get("dataloader"); ok {
		if loader, ok = b.loaderSpec(x); !ok || !loader.checkBatch(batch) {
			return
		}
	}
	// Full recomputation (Megatron's --recompute-granularity full, or a
	// checkpoint around each layer) runs each layer's forward again before
	// its backward and keeps only its input; selective recomputation
	// (Korthikanti et al. 2022) recomputes the attention scores, which
	// fused attention does anyway and the default already leaves out.
	recompute := false
	if x, ok := tm.Get("recompute"); ok {
		s, _ := x.Enum("none", "selective", "full")
		recompute = s == "full"
	}
	var moe *moeSpec
	if x, ok := tm.Get("experts"); ok {
		if moe, ok = b.moeSpec(x); !ok {
			return
		}
	}
	switch {
	case pipe > 1 && zero3:
		pipeX.Errorf("pipeline stages with sharding: zero3 are not modelled (Megatron-LM and DeepSpeed do not combine them): use sharding: none")
	case pipe > 1 && moe != nil:
		pipeX.Errorf("pipeline stages with experts are not modelled: use pipeline: 1")
	case pipe > 1 && !preset && pipeBytes < 0:
		pipeX.Errorf("with listed layers the pipeline needs pipeline_bytes: what a stage sends the next for each sample (a preset sends s x d_model values)")
	case hasPipeBytes && pipe == 1:
		pipeBytesX.Errorf("pipeline_bytes needs pipeline: 2 or more stages")
	case split == "balanced" && pipe == 1:
		splitX.Errorf("pipeline_split: balanced needs pipeline: 2 or more stages (with one, the even split is the only one)")
	case split == "balanced" && tensor > 1:
		splitX.Errorf("pipeline_split: balanced needs tensor: 1: it weighs the layers by their kernels, and tensor-parallel collectives would run between them unweighed")
	case split == "balanced" && chunks > 1:
		splitX.Errorf("pipeline_split: balanced with pipeline_chunks is not modelled: it balances each GPU's layers, and interleaved chunks want each chunk balanced too")
	case chunks > 1 && pipe == 1:
		chunksX.Errorf("pipeline_chunks needs pipeline: 2 or more stages: its chunks go round the stages")
	case layers != nil && int64(len(layers)) < pipe*chunks+int64(btoi(preset)) && chunks > 1:
		chunksX.Errorf("%d stages of %d chunks need at least %d layers; the model has %d", pipe, chunks, pipe*chunks, len(layers)-btoi(preset))
	case layers != nil && int64(len(layers)) < pipe+int64(btoi(preset)):
		pipeX.Errorf("%d stages need at least as many layers; the model has %d", pipe, len(layers)-btoi(preset))
	case chunks > 1 && pipe >= 1 && int64(accum)%pipe != 0:
		at := n
		if x, ok := tm.Get("accumulation"); ok {
			at = x
		}
		at.Errorf("the interleaved schedule (pipeline_chunks) runs micro-batches (accumulation) in groups of the %d stages: %d is not a multiple of %d; use %s", pipe, accum, pipe, multiplesNear(int64(accum), pipe, 10000))
	}
	if n.ErrCount() > 0 {
		return
	}
	if layers == nil {
		// More layers than half the op limit: each is at least two ops.
		key.Errorf("expands to more than %d ops, the limit, with a model of %d layers; lower a count%s", b.opt.MaxOps, nLayers, b.raise())
		return
	}
	elt := float64(dtype.Size())
	gelt := float64(gradType.Size()) // a gradient's bytes
	// A value sent between GPUs (an activation, its gradient, a gathered
	// weight) and a preset's kept activations: in the dtype, but at least
	// bf16. FP8 training runs its GEMMs in FP8 and keeps the rest in bf16:
	// Transformer Engine's layers output bf16, and Megatron-LM gathers bf16
	// parameters (unless --fp8-param-gather).
	celt := max(elt, 2)
	if preset {
		// Korthikanti et al.'s activation bytes are 16-bit training's.
		for i := range layers {
			layers[i].activations *= celt / 2
		}
	}
	tp := float64(tensor)
	nr := len(gpus)
	nst := int(pipe)
	perStage := nr / nst         // the GPUs of a stage
	dp := perStage / int(tensor) // data-parallel ranks: a stage's tensor groups
	moeLayers := int64(0)
	if moe != nil {
		if moeLayers, ok = b.moeLayers(moe, layers, preset, tensor, zero3, zeroOpt, dp, batch, seq, celt); !ok {
			return
		}
	}
	expertParams := 0.0
	for _, l := range layers {
		expertParams += l.expertParams
		if ar := batch * (l.tpBytes + l.tpElems*celt); tensor > 1 && ar > 1e15 {
			key.Errorf("layer %s's tensor-parallel all-reduces would move %s each, more than gpusim's limit of 1 PB: lower batch or seq", l.name, units.Format(ar, units.Bytes))
			return
		}
	}
	// Stage st holds layers[lo[st]:lo[st+1]]: a preset's blocks split as
	// evenly as they go, listed layers the same way. A preset in stages
	// has its word embedding on the first stage and the head, which ties
	// its weights to them, on the last (Megatron-LM), each with a copy of
	// the V d weights; the embedding's output is all-reduced under tensor
	// parallelism in the forward pass, the head's input gradient in the
	// backward, and the two copies' gradients between the stages.
	if preset && nst > 1 {
		head := &layers[len(layers)-1]
		head.noTPFwd = true
		embed := layer{name: "embed", params: head.params, tpElems: head.tpElems, tpBlocks: 1, edge: true, noTPBwd: true}
		layers = append([]layer{embed}, layers...)
	}
	// With interleaving the layers are split into nst x chunks virtual
	// stages, and chunk c of stage st is virtual stage c nst + st; the
	// embedding is on the first, the head on the last.
	nv := nst * int(chunks)
	lo := make([]int, nv+1)
	first := 0 // the first block
	blocks := len(layers)
	if preset {
		blocks--
		if nst > 1 {
			first, blocks = 1, blocks-1
		}
	}
	for vs := 1; vs < nv; vs++ {
		lo[vs] = first + vs*blocks/nv
	}
	lo[nv] = len(layers)
	if split == "balanced" {
		// Each layer's kernels as the stages will run them (tensor 1, one
		// stage a GPU): its forward, its recomputation, its backward, of
		// the roofline time on the first GPU.
		costs := make([]sim.Time, len(layers))
		for i, l := range layers {
			passes := []float64{1, 2}
			if recompute && !l.edge {
				passes = append(passes, 1)
			}
			for _, k := range passes {
				d, err := models.KernelTime(b.sc.Topology.GPUModels[gpus[0]], k*batch*(l.flops-l.masked), dtype, k*(l.params*float64(dtype.Size())+batch*l.activations), kernelShare)
				if err != nil {
					n.Errorf("%v", kernelErr(err))
					return
				}
				costs[i] = satTime(costs[i], d)
			}
		}
		lo = balancedSplit(costs, nv)
	}
	// Buckets: backward goes from a chunk's last layer to its first; a
	// bucket closes when its gradients reach the bucket size (each model
	// chunk has buckets of its own, as Megatron-LM's DDP wraps each).
	type bucketSpec struct {
		bytes  float64 // its gradients'
		params float64 // a GPU's parameters in it
		after  int     // the layer whose backward closes it
	}
	buckets := make([][]bucketSpec, nv)
	for vs := range buckets {
		acc := 0.0
		for i := lo[vs+1] - 1; i >= lo[vs]; i-- {
			acc += layers[i].params / tp // a GPU's shard of the layer
			if acc*gelt >= bucket || i == lo[vs] {
				buckets[vs] = append(buckets[vs], bucketSpec{acc * gelt, acc, i})
				acc = 0
			}
		}
	}
	stages := make([]stageCount, nst)
	stageParams := make([]float64, nst)
	for st := range stages {
		c := stageCount{gpus: int64(perStage), loader: loader != nil && st == 0}
		// Each chunk's layers: virtual stages st, st + nst, ...
		for vs := st; vs < nv; vs += nst {
			c.layers += int64(lo[vs+1] - lo[vs])
			if sharding == "zero3" {
				c.limits += 2 * int64(max(0, lo[vs+1]-lo[vs]-2))
			}
			c.buckets += int64(len(buckets[vs]))
			for _, l := range layers[lo[vs]:lo[vs+1]] {
				stageParams[st] += l.params
				fwdOps, bwdOps := int64(0), int64(0) // a pass's ops beyond its one kernel
				switch {
				case l.moe:
					fwdOps = 3 // two kernels and two all-to-alls
				case tensor > 1 && l.tpBytes+l.tpElems > 0:
					perBlock := int64(2) // the kernel and its all-reduce
					if seqPar {
						perBlock = 3 // an all-gather, the kernel, a reduce-scatter
					}
					fwdOps = perBlock*int64(l.tpBlocks) - 1
					bwdOps = fwdOps
					if l.noTPFwd {
						fwdOps = int64(l.tpBlocks) - 1
					}
					if l.noTPBwd {
						bwdOps = int64(l.tpBlocks) - 1
					}
					c.tpExtra += fwdOps + bwdOps
				}
				if recompute && !l.edge {
					c.recompute += 1 + fwdOps
				}
			}
		}
		if nst > 1 {
			// The 1F1B schedule's sends and receives: its ops less the
			// kernels and the sync; and on the first and last stages the
			// tied embedding's gradients, a record, a wait and an
			// all-reduce.
			c.comm = stageOps(pipe, int64(st), int64(accum), pipeSchedule(chunks), chunks) - 2*int64(accum)*chunks - 1
			if preset && (st == 0 || st == nst-1) {
				c.comm += 3
			}
		}
		stages[st] = c
	}
	if !b.checkOps(key, trainingStageOps(stages, int64(steps), int64(accum), moeLayers, sharding, overlap, overlapGather, syncEvery), "a count") {
		return
	}
	// The GPUs of stage st's tensor group k, and of its data-parallel group
	// t (the t-th GPU of each of its tensor groups): the list's GPU
	// st x perStage + k x tensor + t.
	tpGroup := func(st, k int) []int {
		base := st*perStage + k*int(tensor)
		return gpus[base : base+int(tensor)]
	}
	dpGroup := func(st, t int) []int {
		out := make([]int, 0, dp)
		for k := 0; k < dp; k++ {
			out = append(out, gpus[st*perStage+k*int(tensor)+t])
		}
		return out
	}
	b.trainingMemory(key.Pos(), gpus, layers, lo, nst, accum, expertParams, tp, float64(dp), sharding, elt, gelt, seqPar, moe != nil, recompute, optBytes, batch, seq)
	b.trainingWork(gpus, layers, preset, dtype, steps, dp*accum*int(batch), seq)
	plans := map[string]*sim.CollPlan{}
	var errs collErrs // said once every collective is built
	defer b.sayCollErrs(n, tm, &errs)
	// plan returns the collective over group (named by its key, "dp0",
	// "tp1") that kind and bytes make, built once.
	plan := func(group string, ranks []int, kind string, bytes float64) *sim.CollPlan {
		key := group + "/" + kind + strconv.FormatFloat(bytes, 'g', -1, 64)
		if p, ok := plans[key]; ok {
			return p
		}
		// In place, as DDP, FSDP and Megatron call NCCL: over one rank
		// (a data-parallel degree of 1), NCCL does nothing.
		spec := models.CollSpec{Kind: kind, GPUs: ranks, Bytes: int64(bytes), Algorithm: algo, Protocol: proto, SMShare: commShare, InPlace: true}
		if kind == models.AllToAll {
			// Forced algorithms and protocols are the all-reduces' (and
			// ZeRO-3's); the experts' all-to-alls keep NCCL's own.
			spec.Algorithm, spec.Protocol = "", ""
		}
		spec.MaxTasks = b.opt.PlanTasks
		p, err := models.BuildCollective(b.m, b.sc.Topology.GPUModels, spec)
		errs.built(spec, err)
		if err != nil {
			p = nil // said once: the ops that would use it are left out
		} else {
			b.warnMultiNode(n.Pos(), ranks)
		}
		plans[key] = p
		return p
	}
	gm := func(gpu int) models.GPU { return b.sc.Topology.GPUModels[gpu] }
	// kernel returns the op of a compute kernel of flops and bytes.
	kernel := func(gpu, compute int, flops, bytes float64) (sim.Op, bool) {
		d, err := models.KernelTime(gm(gpu), flops, dtype, bytes, kernelShare)
		if err != nil {
			n.Errorf("%v", kernelErr(err))
			return sim.Op{}, false
		}
		return sim.Op{Kind: sim.OpKernel, Stream: compute, Duration: d, SMShare: kernelShare, MemoryBound: models.MemoryBound(gm(gpu), flops, dtype, bytes)}, true
	}
	// optimizer returns the op of an optimizer step over bytes of state.
	optimizer := func(gpu, compute int, bytes float64) (sim.Op, bool) {
		d, err := models.KernelTime(gm(gpu), 0, dtype, bytes, kernelShare)
		if errors.Is(err, models.ErrKernelRange) {
			n.Errorf("the optimizer step's %s: lower optimizer_bytes_per_param or the model's parameters, shard it (sharding:), or split it over more GPUs (tensor:, pipeline:)", strings.TrimSuffix(err.Error(), ": "+models.ErrKernelRange.Error()))
			return sim.Op{}, false
		} else if err != nil {
			n.Errorf("%v", err)
			return sim.Op{}, false
		}
		return sim.Op{Kind: sim.OpKernel, Stream: compute, Duration: d, SMShare: kernelShare, MemoryBound: bytes > 0}, true
	}
	// What a stage sends the next for a micro-batch, and back: a preset's
	// s x d values a sample (split by tensor with sequence parallelism).
	if pipeBytes < 0 && preset {
		pipeBytes = seq * layers[len(layers)-2].d * celt // a block's: the last is the head
		if seqPar {
			pipeBytes /= tp
		}
	}
	if pipe > 1 && batch*pipeBytes > 1e15 {
		key.Errorf("each pipeline send would move %s, more than gpusim's limit of 1 PB: lower batch or pipeline_bytes", units.Format(batch*pipeBytes, units.Bytes))
		return
	}
	pipeMsg := int64(min(batch*pipeBytes, 1e15)) // no stage sends it where pipe is 1
	mods := b.sc.Topology.GPUModels
	sends, xchgs := map[[3]int]*sim.CollPlan{}, map[[2]int]*sim.CollPlan{}
	for rank, gpu := range gpus {
		st, r := rank/perStage, rank%perStage
		name := "train/" + b.m.GPUs[gpu].Name
		threadOps := trainingThreadOps(int64(steps), int64(accum), moeLayers, stages[st], sharding, overlap, overlapGather, syncEvery)
		th := sim.Thread{Name: name, Host: b.m.GPUs[gpu].Host, Ops: make([]sim.Op, 0, satAdd(threadOps, satMul(int64(steps), stages[st].comm)))}
		compute, comm := g.stream(gpu, "compute"), g.stream(gpu, "comm")
		copyStream := g.stream(gpu, "copy")
		var ready, free int
		if stages[st].loader {
			ready = g.sem(name+"/ready", 0, true)
			free = g.sem(name+"/free", loader.workers*loader.prefetch, false)
			b.loaderThreads(g, gpu, name, loader, steps*accum, batch, ready, free)
		}
		// This GPU's data-parallel group is t of its stage, and its rank
		// there k; its tensor group is k of its stage, and its rank there t.
		// Groups are numbered over all stages (tp: rank / tensor; dp: stage
		// x tensor + t). Without tensor or pipeline parallelism the one
		// data-parallel group is every GPU, and ids keep no group suffix.
		t, k := r%int(tensor), r/int(tensor)
		dpIdx, tpIdx := st*int(tensor)+t, rank/int(tensor)
		dpKey, dpSuffix := fmt.Sprintf("dp%d", dpIdx), ""
		if tensor > 1 || nst > 1 {
			dpSuffix = "/" + dpKey
		}
		dpRanks, tpRanks := dpGroup(st, t), tpGroup(st, k)
		dpPlan := func(kind string, bytes float64) *sim.CollPlan { return plan(dpKey, dpRanks, kind, bytes) }
		tpColl := func(id, kind string, bytes float64) {
			// On the compute stream: the next kernel needs its result.
			g.collOp(&th, id, plan(fmt.Sprintf("tp%d", tpIdx), tpRanks, kind, bytes), compute, t)
		}
		shard := 1.0 // the share of the parameters this GPU updates
		if zero3 || zeroOpt {
			shard = 1 / float64(dp)
		}
		// With experts (and tensor 1): this GPU's expert-parallel group ep
		// (consecutive ranks) and rank there, and the group of the GPUs
		// holding the same experts (edp), whose gradients they all-reduce.
		var ep, epRank, edp, edpRank int
		var epRanks, edpRanks []int
		if moe != nil {
			P := moe.parallel
			ep, epRank, edp, edpRank = rank/P, rank%P, rank%P, rank/P
			epRanks = gpus[ep*P : (ep+1)*P]
			for j := edp; j < nr; j += P {
				edpRanks = append(edpRanks, gpus[j])
			}
		}
		expertGrads := func(s int, l layer) {
			g.collOp(&th, fmt.Sprintf("train/s%d/experts/%s/edp%d", s, l.name, edp), plan(fmt.Sprintf("edp%d", edp), edpRanks, models.AllReduce, l.expertParams*gelt), comm, edpRank)
		}
		// pass issues one layer's forward (passes 1) or backward (2) work:
		// one kernel, or with tensor parallelism one per block (a
		// transformer layer's attention and MLP; the backward goes through
		// them in reverse), each followed by its all-reduce.
		// kern issues a kernel of the roofline time of flops and bytes.
		kern := func(id string, flops, bytes float64) bool {
			op, ok := kernel(gpu, compute, flops, bytes)
			if ok {
				g.op(&th, id, op)
			}
			return ok
		}
		pass := func(mp, what string, s, m int, l layer, passes float64) bool {
			flops, bytes := passes*batch*(l.flops-l.masked)/tp, passes*(l.params*elt+batch*l.activations)/tp
			if l.moe {
				// Attention, then the tokens sent to their experts and back
				// (all-to-alls on the compute stream: the next kernel needs
				// them); the backward in reverse.
				a2a := batch * l.a2aElems * celt
				// Attention's activations, 13 of a preset block's 34 s d
				// bytes (the MLP's 21 are the experts', in their
				// all-to-alls' tokens).
				attnBytes := bytes
				if l.d > 0 {
					attnBytes = passes * (l.params*elt + batch*l.activations*13/34) / tp
				}
				attn := func() bool { return kern(mp+"/"+what+"/"+l.name+"/attn", flops, attnBytes) }
				experts := func() bool {
					return kern(mp+"/"+what+"/"+l.name+"/experts", passes*batch*l.expertFlops, passes*(l.expertParams*elt+2*a2a))
				}
				allToAll := func(which string) {
					g.collOp(&th, fmt.Sprintf("train/s%d/m%d/ep%d/%s/%s/%s", s, m, ep, what, l.name, which), plan(fmt.Sprintf("ep%d", ep), epRanks, models.AllToAll, a2a), compute, epRank)
				}
				if what != "bwd" { // a forward pass, or its recomputation
					if !attn() {
						return false
					}
					allToAll("dispatch")
					if !experts() {
						return false
					}
					allToAll("combine")
					return true
				}
				allToAll("combine")
				if !experts() {
					return false
				}
				allToAll("dispatch")
				return attn()
			}
			ar := batch * (l.tpBytes + l.tpElems*celt)
			blocks := []string{""}
			switch {
			case tensor > 1 && ar > 0 && l.tpBlocks == 2 && what == "bwd":
				blocks = []string{"/mlp", "/attn"}
			case tensor > 1 && ar > 0 && l.tpBlocks == 2:
				blocks = []string{"/attn", "/mlp"}
			}
			for _, blk := range blocks {
				id := fmt.Sprintf("train/s%d/m%d/tp%d/%s/%s%s", s, m, tpIdx, what, l.name, blk)
				split := tensor > 1 && ar > 0 && !(what == "bwd" && l.noTPBwd) && !(what != "bwd" && l.noTPFwd)
				if split && seqPar {
					tpColl(id+"/gather", models.AllGather, ar)
				}
				bf, bb := flops/float64(len(blocks)), bytes/float64(len(blocks))
				if blk != "" && l.d > 0 {
					// A preset block's MLP: 16 s d^2 FLOPs, 8 d^2 of its
					// 12 d^2 weights and 21 of its 34 s d activation bytes
					// (Korthikanti et al. 2022, section 4.1: 19 s d and
					// its layer norm's 2); attention the rest, its 2 s^2 d
					// causal products included.
					mlpF, mlpB := passes*batch*16*l.d*l.d*seq/tp, passes*(l.params*2/3*elt+batch*l.activations*21/34)/tp
					bf, bb = mlpF, mlpB
					if blk == "/attn" {
						bf, bb = flops-mlpF, bytes-mlpB
					}
				}
				if !kern(mp+"/"+what+"/"+l.name+blk, bf, bb) {
					return false
				}
				switch {
				case split && seqPar:
					tpColl(id+"/scatter", models.ReduceScatter, ar)
				case split:
					tpColl(id, models.AllReduce, ar)
				}
			}
			return true
		}
		// forward issues micro-batch m's forward pass over the layers of
		// virtual stage vs (with its batch's load on the first), backward
		// its backward pass, with the gradients' collectives after the
		// last micro-batch's. With interleaving a chunk's ids name it (cC).
		prefix := func(s, m, vs int) string {
			if chunks > 1 {
				return fmt.Sprintf("%s/s%d/m%d/c%d", name, s, m, vs/nst)
			}
			return fmt.Sprintf("%s/s%d/m%d", name, s, m)
		}
		bucketBase := make([]int, nv) // a chunk's first bucket's number on the stage
		for vs := st + nst; vs < nv; vs += nst {
			bucketBase[vs] = bucketBase[vs-nst] + len(buckets[vs-nst])
		}
		// With overlap_param_gather, bucket b's gather ends with a record of
		// an event of its own, which the first layer of the bucket in the
		// forward pass order (the one whose backward closes it) waits for.
		gatheredEvent := func(s, b int) string { return fmt.Sprintf("%s/s%d/gathered%d", name, s, b) }
		gatherBefore := map[int]int{}
		for vs := st; vs < nv; vs += nst {
			for bi, bk := range buckets[vs] {
				gatherBefore[bk.after] = bucketBase[vs] + bi
			}
		}
		forward := func(s, m, vs int) bool {
			mp := prefix(s, m, vs)
			if stages[st].loader && vs == 0 {
				g.op(&th, mp+"/next-batch", sim.Op{Kind: sim.OpAwait, Sem: ready})
				g.op(&th, mp+"/h2d", sim.Op{Kind: sim.OpCopy, Stream: copyStream, Src: b.m.Hosts[b.m.GPUs[gpu].Host].Node,
					Dst: b.m.GPUs[gpu].Node, Bytes: int64(batch * loader.sampleBytes), Memory: loader.memory})
				g.after(&th, mp+"/batch-in", copyStream, compute)
				g.op(&th, mp+"/release", sim.Op{Kind: sim.OpSignal, Sem: free, Count: 1})
			}
			for li := lo[vs]; li < lo[vs+1]; li++ {
				l := layers[li]
				if b, ok := gatherBefore[li]; ok && overlapGather && s > 0 && m == 0 {
					// The first layer of bucket b: its parameters as the
					// last step's optimizer left them, gathered.
					g.op(&th, fmt.Sprintf("%s/wait-gather%d", mp, b), sim.Op{Kind: sim.OpEventWait, Stream: compute, Event: g.event(gatheredEvent(s-1, b))})
				}
				if zero3 {
					// FSDP's rate limiter (limit_all_gathers): a layer's
					// gather waits for the forward two layers back to end,
					// so at most two layers' weights are gathered ahead of
					// the compute (without it every gather ran at once at
					// the start of the step).
					if li-2 >= lo[vs] {
						g.op(&th, fmt.Sprintf("%s/fwd-limit/%d", mp, li), sim.Op{Kind: sim.OpEventWait, Stream: comm, Event: g.event(fmt.Sprintf("%s/fwd-done/%d", mp, li-2))})
					} else if !syncEvery && s > 0 && m == 0 {
						// Without a sync between steps the first two
						// gathers were issued under the last step's
						// optimizer and read shards it had not updated.
						prev := fmt.Sprintf("%s/s%d/optimized", name, s-1)
						g.op(&th, fmt.Sprintf("%s/fwd-limit/%d", mp, li), sim.Op{Kind: sim.OpEventWait, Stream: comm, Event: g.event(prev)})
					}
					g.collOp(&th, fmt.Sprintf("train/s%d/m%d/gather-fwd/%s%s", s, m, l.name, dpSuffix), dpPlan(models.AllGather, l.params/tp*celt), comm, k)
					g.after(&th, fmt.Sprintf("%s/fwd-gathered/%d", mp, li), comm, compute)
				}
				if !pass(mp, "fwd", s, m, l, 1) {
					return false
				}
				if zero3 && li+2 < lo[vs+1] {
					g.op(&th, fmt.Sprintf("%s/fwd-done/%d", mp, li), sim.Op{Kind: sim.OpEventRecord, Stream: compute, Event: g.event(fmt.Sprintf("%s/fwd-done/%d", mp, li))})
				}
			}
			return true
		}
		// ZeRO-2 and -3 keep a shard of the gradients only, so each
		// micro-batch's are reduce-scattered as they come (DeepSpeed, and
		// FSDP without no_sync); otherwise the last micro-batch's backward
		// reduces what the others accumulated.
		everyMicro := sharding == "zero2" || zero3
		bucketID := func(s, m, b int) string {
			if everyMicro {
				return fmt.Sprintf("train/s%d/m%d/bucket%d%s", s, m, b, dpSuffix)
			}
			return fmt.Sprintf("train/s%d/bucket%d%s", s, b, dpSuffix)
		}
		backward := func(s, m, vs int) bool {
			mp := prefix(s, m, vs)
			last := m == accum-1
			reduce := last || everyMicro
			bi := 0
			bs := buckets[vs]
			// ZeRO-3 gathers a layer's weights for its backward one layer
			// ahead, as FSDP's default backward_prefetch (BACKWARD_PRE) and
			// DeepSpeed do: the next layer's gather is issued as this
			// layer's backward begins, before this layer's reduce-scatter,
			// and runs under it. (Issued after it, each layer's gather
			// waited for the layer before's backward and reduce-scatter,
			// and none of it hid.)
			gatherBwd := func(li int) {
				id := fmt.Sprintf("%s/bwd-gathered/%d", mp, li)
				g.collOp(&th, fmt.Sprintf("train/s%d/m%d/gather-bwd/%s%s", s, m, layers[li].name, dpSuffix), dpPlan(models.AllGather, layers[li].params/tp*celt), comm, k)
				g.op(&th, id+"/record", sim.Op{Kind: sim.OpEventRecord, Stream: comm, Event: g.event(id)})
			}
			// The last layer's backward follows its forward at once: its
			// weights are still gathered (FSDP does not reshard its root
			// unit after the forward, nor DeepSpeed weights it reuses within
			// stage3_max_reuse_distance), so the gathers start with the
			// layer before it. (ZeRO-3 runs without pipeline stages: one
			// virtual stage.)
			if zero3 && lo[vs+1]-1 > lo[vs] {
				gatherBwd(lo[vs+1] - 2)
			}
			for li := lo[vs+1] - 1; li >= lo[vs]; li-- {
				l := layers[li]
				if zero3 && li < lo[vs+1]-1 {
					if li-1 >= lo[vs] {
						gatherBwd(li - 1)
					}
					id := fmt.Sprintf("%s/bwd-gathered/%d", mp, li)
					g.op(&th, id+"/wait", sim.Op{Kind: sim.OpEventWait, Stream: compute, Event: g.event(id)})
				}
				if recompute && !l.edge && !pass(mp, "recompute", s, m, l, 1) {
					return false
				}
				if !pass(mp, "bwd", s, m, l, 2) {
					return false
				}
				if reduce && overlap && bi < len(bs) && bs[bi].after == li {
					g.after(&th, fmt.Sprintf("%s/grads/%d", mp, bi), compute, comm)
					g.bucketOp(&th, bucketID(s, m, bucketBase[vs]+bi), zero3 || zeroOpt, bs[bi].bytes, dpPlan, comm, k)
					bi++
				}
				if last && overlap && l.moe {
					g.after(&th, fmt.Sprintf("%s/expert-grads/%d", mp, li), compute, comm)
					expertGrads(s, l)
				}
			}
			// The stage's last backward is its first chunk's (vs = st)
			// on the last micro-batch; without overlap every chunk's
			// buckets go after it, the last chunk's (done first) first.
			if reduce && !overlap && vs == st {
				g.after(&th, mp+"/grads", compute, comm)
				for c := nv - nst + st; c >= st; c -= nst {
					for bi, bk := range buckets[c] {
						g.bucketOp(&th, bucketID(s, m, bucketBase[c]+bi), zero3 || zeroOpt, bk.bytes, dpPlan, comm, k)
					}
				}
				for li := lo[vs+1] - 1; li >= lo[vs]; li-- {
					if layers[li].moe {
						expertGrads(s, layers[li])
					}
				}
			}
			if last && preset && nst > 1 && (st == 0 || st == nst-1) && vs == st {
				// The tied embedding's two copies' gradients, between
				// the first and last stages' GPUs of this place, in a
				// communicator of their own (Megatron's embedding group).
				g.after(&th, mp+"/embedding-grads", compute, comm)
				pl := plan(fmt.Sprintf("emb%d", r), []int{gpus[r], gpus[(nst-1)*perStage+r]}, models.AllReduce, layers[0].params/tp*gelt)
				g.collOp(&th, fmt.Sprintf("train/s%d/embedding%d", s, r), pl, comm, btoi(st > 0))
				if pl != nil {
					th.Ops[len(th.Ops)-1].Comm = b.namedComm("train/embedding") // no name a file can give
				}
			}
			return true
		}
		// Between stages, on the compute stream: this GPU's counterpart
		// (the same place r) on the stage before and after. A one-way
		// transfer's sender issues rank 0, its receiver rank 1; an
		// exchange between stages q and q+1 has q's GPU as rank 0.
		peer := func(q int) int { return gpus[q*perStage+r] }
		send := func(s, m, from, to int, what string, rank int) {
			key := [3]int{from, to, r}
			if sends[key] == nil {
				sends[key] = models.SendPlan(b.m, mods, peer(from), peer(to), pipeMsg)
			}
			g.collOp(&th, fmt.Sprintf("train/s%d/%s%d.%d/m%d", s, what, to, r, m), sends[key], compute, rank)
		}
		exchange := func(s, q, i, rank int) {
			key := [2]int{q, r}
			if xchgs[key] == nil {
				xchgs[key] = models.ExchangePlan(b.m, mods, peer(q), peer(q+1), pipeMsg, pipeMsg)
			}
			g.collOp(&th, fmt.Sprintf("train/s%d/xchg%d.%d/i%d", s, q, r, i), xchgs[key], compute, rank)
		}
		// gather all-gathers the parameters step s's optimizer updated, each
		// rank its shard, in the forward pass's order (a chunk's last bucket
		// holds its first layers), and makes compute wait for them; with
		// overlap_param_gather the next step issues them as it begins (as
		// Megatron-LM's forward pre-hooks do, after any sync between steps)
		// and waits for each before its bucket's first layer, and the last
		// step issues its own after its optimizer.
		gather := func(s int) {
			sp := fmt.Sprintf("%s/s%d", name, s)
			g.after(&th, sp+"/updated", compute, comm)
			for vs := st; vs < nv; vs += nst {
				for bi := len(buckets[vs]) - 1; bi >= 0; bi-- {
					b := bucketBase[vs] + bi
					g.collOp(&th, fmt.Sprintf("train/s%d/gather%d%s", s, b, dpSuffix), dpPlan(models.AllGather, buckets[vs][bi].params*celt), comm, k)
					if overlapGather {
						g.op(&th, sp+"/gathered"+strconv.Itoa(b), sim.Op{Kind: sim.OpEventRecord, Stream: comm, Event: g.event(gatheredEvent(s, b))})
					}
				}
			}
			if !overlapGather {
				g.after(&th, sp+"/gathered", comm, compute)
			}
		}
		for s := 0; s < steps; s++ {
			sp := fmt.Sprintf("%s/s%d", name, s)
			if overlapGather && s > 0 {
				gather(s - 1)
			}
			switch {
			case nst == 1:
				for m := 0; m < accum; m++ {
					if !forward(s, m, 0) || !backward(s, m, 0) {
						return
					}
				}
			case chunks > 1:
				// Megatron-LM's interleaved 1F1B, as pipeline: runs it, its
				// transfers on channels of their own (interleavedComm).
				transfer := func(id, chName string, from, to, stream, rank int) {
					key := [3]int{from, to, r}
					if sends[key] == nil {
						sends[key] = models.SendPlan(b.m, mods, peer(from), peer(to), pipeMsg)
					}
					g.collOp(&th, id, sends[key], stream, rank)
					th.Ops[len(th.Ops)-1].Comm = b.namedComm("train/" + chName) // no name a file can give
				}
				posted := newPipePosted()
				for _, ps := range interleavedSteps(nst, int(chunks), accum, st) {
					vs := ps.chunk*nst + st
					pass := func() bool { return backward(s, ps.micro, vs) }
					if ps.fwd {
						pass = func() bool { return forward(s, ps.micro, vs) }
					}
					if !interleavedComm(g, &th, gpu, compute, nst, int(chunks), st, ps, fmt.Sprintf("train/s%d", s), "."+strconv.Itoa(r), posted, pass, transfer) {
						return
					}
				}
			default:
				// Megatron-LM's 1F1B without interleaving, as pipeline:
				// runs it (forward_backward_pipelining_without_interleaving).
				recvForward := func(m int) {
					if st > 0 {
						send(s, m, st-1, st, "act", 1)
					}
				}
				sendForward := func(m int) {
					if st < nst-1 {
						send(s, m, st, st+1, "act", 0)
					}
				}
				recvBackward := func(m int) {
					if st < nst-1 {
						send(s, m, st+1, st, "grad", 1)
					}
				}
				sendBackward := func(m int) {
					if st > 0 {
						send(s, m, st, st-1, "grad", 0)
					}
				}
				warm := min(nst-st-1, accum)
				remaining := accum - warm
				for m := 0; m < warm; m++ {
					recvForward(m)
					if !forward(s, m, st) {
						return
					}
					sendForward(m)
				}
				if remaining > 0 {
					recvForward(warm)
				}
				for i := 0; i < remaining; i++ {
					if !forward(s, warm+i, st) {
						return
					}
					if st < nst-1 {
						exchange(s, st, i, 0) // send_forward_recv_backward
					}
					if !backward(s, i, st) {
						return
					}
					if i == remaining-1 {
						sendBackward(i)
					} else if st > 0 {
						exchange(s, st-1, i, 1) // send_backward_recv_forward
					}
				}
				for i := 0; i < warm; i++ {
					recvBackward(remaining + i)
					if !backward(s, remaining+i, st) {
						return
					}
					sendBackward(remaining + i)
				}
			}
			// Optimizer step after the gradients are in.
			g.after(&th, sp+"/reduced", comm, compute)
			op, ok := optimizer(gpu, compute, (stageParams[st]/tp*shard+expertParams)*optBytes)
			if !ok {
				return
			}
			g.op(&th, sp+"/optimizer", op)
			if zero3 && !syncEvery && s < steps-1 {
				// The next step's first gathers wait for the update
				// (the later ones wait on the forward, which follows it).
				g.op(&th, sp+"/optimized", sim.Op{Kind: sim.OpEventRecord, Stream: compute, Event: g.event(sp + "/optimized")})
			}
			if zeroOpt && (!overlapGather || s == steps-1) {
				gather(s)
			}
			if syncEvery {
				g.op(&th, sp+"/sync", sim.Op{Kind: sim.OpSync, Sync: sim.SyncDevice, GPU: gpu})
			}
		}
		b.p.Threads = append(b.p.Threads, th)
	}
}

// trainingWork states what the training achieves: samples of each step
// over all replicas, tokens (a preset's), and the model FLOPs, 3 x the
// forward pass's (the experts' for the tokens routed to them; not the
// recomputation), against the GPUs' peak in the dtype.
func (b *builder) trainingWork(gpus []int, layers []layer, preset bool, dtype models.DType, steps, samplesPerStep int, seq float64) {
	fwd := 0.0
	for _, l := range layers {
		fwd += l.flops + l.expertFlops
	}
	samples := float64(steps) * float64(samplesPerStep)
	w := &sim.Work{Steps: steps, Samples: samples, ModelFLOPs: 3 * fwd * samples, DType: string(dtype), GPUs: len(gpus)}
	if preset {
		w.Tokens = samples * seq
	}
	for _, g := range gpus {
		peak, ok := b.sc.Topology.GPUModels[g].Peak[dtype]
		if !ok {
			w.PeakFLOPs = 0
			break
		}
		w.PeakFLOPs += peak
	}
	b.p.Work = w
}

// trainingMemory warns, once, when a GPU of the training would need more
// memory than it has. Each GPU holds its share of the model state
// (weights, gradients and optimizer state: half optimizer_bytes_per_param,
// 16 bytes with mixed-precision Adam, ZeRO's 2 + 2 + 12; the dense part
// split by tensor and, with zero3, by the data-parallel ranks, with zero1
// all but the weights and gradients, with zero2 all but the weights; its
// experts) and one micro-batch's activations kept for the backward pass
// (Korthikanti et al. 2022, eq. 2 and 3: s d (10 + 24/t) bytes a sample
// per transformer block under t-way tensor parallelism, 34 s d / t with
// sequence parallelism, without the attention scores that fused attention
// does not keep; the head's logits; other layers' activations, all / t;
// with full recomputation, see below). Workspace, fragmentation and the
// framework are left out: a warning means it cannot fit.
func (b *builder) trainingMemory(where string, gpus []int, layers []layer, lo []int, nst, accum int, experts, tp, dp float64, sharding string, elt, gelt float64, seqPar, moe, recompute bool, optBytes, batch, seq float64) {
	zero3 := sharding == "zero3"
	shard := 1.0
	if zero3 {
		shard = 1 / dp
	}
	// A dense parameter's state, half optBytes: ZeRO-1 keeps its weight
	// (in the dtype, at least bf16's 2 bytes: FP8 training keeps it in
	// bf16) and its gradient (gelt) whole and a dp-th of the rest, ZeRO-2
	// the weight.
	perParam := optBytes / 2
	switch whole := 0.0; sharding {
	case "zero1", "zero2":
		whole = max(elt, 2) + gelt
		if sharding == "zero2" {
			whole = max(elt, 2)
		}
		whole = min(whole, perParam)
		perParam = whole + (perParam-whole)/dp
	}
	// A preset block's activations (Korthikanti et al.'s bytes are 16-bit
	// training's) in the dtype, at least bf16.
	as := max(elt, 2) / 2
	chunks := (len(lo) - 1) / nst
	perStage := len(gpus) / nst
	worst, over := -1, 0
	var params, state, acts float64 // the worst GPU's
	worstStage := 0
	for st := 0; st < nst; st++ {
		dense := 0.0
		most := 0.0
		chunkActs := make([]float64, chunks) // a sample's kept activations, a chunk
		for vs := st; vs < len(lo)-1; vs += nst {
			act := &chunkActs[vs/nst]
			for _, l := range layers[lo[vs]:lo[vs+1]] {
				dense += l.params
				a := 0.0
				switch {
				case l.d > 0 && seqPar:
					a = seq * l.d * 34 / tp * as
				case l.d > 0:
					a = seq * l.d * (10 + 24/tp) * as
				case l.keep > 0:
					a = l.keep / tp
				default:
					a = l.activations / tp
				}
				if !recompute || l.edge {
					*act += a // the head is not recomputed: its logits stay
					continue
				}
				// Full recomputation keeps a block's input, 2 s d (2 s d /
				// t with sequence parallelism; Korthikanti et al. 2022,
				// Table 2), and needs one layer's activations at a time
				// for its backward; a listed layer's input size is not
				// known and counts nothing.
				most = max(most, a)
				switch {
				case l.d > 0 && seqPar:
					*act += 2 * seq * l.d / tp * as
				case l.d > 0:
					*act += 2 * seq * l.d * as
				}
			}
		}
		// 1F1B keeps the activations of min(stages - st, micro-batches)
		// micro-batches on stage st (Narayanan et al. 2021, section 2.2.1);
		// the one layer recomputed is live for one of them at a time.
		// Interleaved, a stage holds a chunk's for each forward it has run
		// without its backward: the most its schedule holds at once, each
		// chunk's its own (the last stage's last has the head's logits).
		held := float64(min(nst-st, accum)) * chunkActs[0]
		if chunks > 1 {
			held = 0
			now := 0.0
			for _, ps := range interleavedSteps(nst, chunks, accum, st) {
				if !ps.fwd {
					now -= chunkActs[ps.chunk]
					continue
				}
				now += chunkActs[ps.chunk]
				held = max(held, now)
			}
		}
		stParams := dense/tp*shard + experts
		stState, stActs := dense/tp*shard*perParam+experts*optBytes/2, batch*(held+most)
		need := stState + stActs
		for _, gpu := range gpus[st*perStage : (st+1)*perStage] {
			gm := b.sc.Topology.GPUModels[gpu]
			if gm.MemoryBytes <= 0 || need <= float64(gm.MemoryBytes) {
				continue
			}
			// The smallest GPU over, and of those the one needing most.
			over++
			if w := b.sc.Topology.GPUModels; worst < 0 || gm.MemoryBytes < w[worst].MemoryBytes || gm.MemoryBytes == w[worst].MemoryBytes && need > state+acts {
				worst, params, state, acts, worstStage = gpu, stParams, stState, stActs, st
			}
		}
	}
	need := state + acts
	if worst < 0 {
		return
	}
	others := ""
	switch {
	case over == 2:
		others = " and 1 more GPU"
	case over > 2:
		others = fmt.Sprintf(" and %d more GPUs", over-1)
	}
	// What could help: less model state on each GPU, where GPUs are left
	// to split it over (data-parallel replicas); and less activation
	// memory, unless the state alone is too much.
	gm := b.sc.Topology.GPUModels[worst]
	var ways []string
	blocks := 0
	for _, l := range layers {
		if !l.edge {
			blocks++
		}
	}
	switch {
	case moe:
		ways = append(ways, "more expert-parallel ranks (experts: parallel)")
	case dp > 1:
		ways = append(ways, "more tensor parallelism (tensor:)")
		if !zero3 && blocks > nst {
			ways = append(ways, "more pipeline stages (pipeline:)")
		}
		// Stronger ZeRO stages than this one ("none" sorts before them),
		// ZeRO-3 only without stages.
		var more []string
		for _, z := range []string{"zero1", "zero2", "zero3"} {
			if z > sharding && (z != "zero3" || nst == 1) {
				more = append(more, z)
			}
		}
		if len(more) > 0 {
			last := len(more) - 1
			list := more[last]
			if last > 0 {
				list = strings.Join(more[:last], ", ") + " or " + list
			}
			ways = append(ways, "sharding: "+list)
		}
	}
	if len(ways) == 0 && state >= float64(gm.MemoryBytes) {
		ways = append(ways, "more GPUs, or GPUs with more memory")
	}
	if state < float64(gm.MemoryBytes) {
		if tp > 1 && !seqPar {
			ways = append(ways, "sequence_parallel: true")
		}
		if !recompute {
			ways = append(ways, "recompute: full")
		}
		ways = append(ways, "a smaller batch")
	}
	gib := float64(int64(1) << 30)
	what := "a GPU"
	if nst > 1 {
		what = fmt.Sprintf("a GPU of pipeline stage %d", worstStage)
	}
	b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("%s: training: %s needs about %.4g GiB (model state %.4g GiB: %.4g billion parameters x %.3g bytes; activations %.4g GiB), more than the %.4g GiB of %s (%s)%s: it would not fit; try %s",
		where, what, need/gib, state/gib, params/1e9, perParam, acts/gib, float64(gm.MemoryBytes)/gib, b.m.GPUs[worst].Name, gm.Name, others, strings.Join(ways, ", ")))
}

// collOp issues one rank's part of a collective with the given id.
func (g gen) collOp(th *sim.Thread, id string, plan *sim.CollPlan, stream, rank int) {
	if plan == nil {
		return
	}
	key := collStreamsKey{plan, g.b.p.Streams[stream].Name}
	streams, ok := g.b.collStreams[key]
	if !ok {
		streams = make([]int, len(plan.Ranks))
		for i, gpu := range plan.Ranks {
			streams[i] = g.stream(gpu, key.stream)
		}
		if g.b.collStreams == nil {
			g.b.collStreams = map[collStreamsKey][]int{}
		}
		g.b.collStreams[key] = streams
	}
	g.op(th, id, sim.Op{Kind: sim.OpCollective, Coll: plan, Streams: streams, Stream: streams[0], OneRank: true, Rank: rank})
}

func (g gen) bucketOp(th *sim.Thread, id string, scatter bool, bytes float64, getPlan func(string, float64) *sim.CollPlan, comm, rank int) {
	kind := models.AllReduce
	if scatter {
		kind = models.ReduceScatter
	}
	g.collOp(th, id, getPlan(kind, bytes), comm, rank)
}

// loaderSpec is a data loader: worker threads preparing batches, each with
// up to prefetch batches ready or in preparation (PyTorch's DataLoader
// prefetch_factor, default 2: workers x prefetch batches in flight).
type loaderSpec struct {
	workers     int
	sampleTime  sim.Time
	sampleBytes float64
	prefetch    int
	memory      sim.MemoryKind
	// The fields, for errors of a batch's time and size.
	timeAt, bytesAt spec.Node
}

// checkBatch refuses a batch of batch samples whose preparation is past the
// simulator's range, or whose copy is more than gpusim's limit of 1 PB.
func (l *loaderSpec) checkBatch(batch float64) bool {
	ok := true
	if t := float64(l.sampleTime) * batch; t >= float64(sim.MaxTime) { // MaxTime rounds up to 2^63 as a float
		l.timeAt.Errorf("a batch of %.0f samples takes %.3g s to prepare, past the simulator's range (at most %s): lower sample_time or batch", batch, t/float64(sim.Second), sim.MaxTime)
		ok = false
	}
	if v := l.sampleBytes * batch; v > 1e15 {
		l.bytesAt.Errorf("a batch of %.0f samples is %s, more than gpusim's limit of 1 PB: lower sample_bytes or batch", batch, units.Format(v, units.Bytes))
		ok = false
	}
	return ok
}

func (b *builder) loaderSpec(n spec.Node) (*loaderSpec, bool) {
	lm, ok := n.Map("workers", "sample_time", "sample_bytes", "prefetch", "memory")
	if !ok {
		return nil, false
	}
	l := &loaderSpec{workers: 4, prefetch: 2}
	if x, ok := lm.Get("workers"); ok {
		v, _ := x.Int(1, 1024)
		l.workers = int(v)
	}
	if x, ok := lm.Require("sample_time", "the CPU time to prepare one sample, such as 2 ms"); ok {
		l.sampleTime, _ = x.Time(spec.NonNeg)
		l.timeAt = x
	}
	if x, ok := lm.Require("sample_bytes", "the size of one prepared sample, such as 600 KiB"); ok {
		l.sampleBytes, _ = x.Quantity(units.Bytes, spec.NonNeg)
		l.bytesAt = x
	}
	if x, ok := lm.Get("prefetch"); ok {
		v, _ := x.Int(1, 1024)
		l.prefetch = int(v)
	}
	if x, ok := lm.Get("memory"); ok {
		if s, _ := x.Enum("pinned", "pageable"); s == "pageable" {
			l.memory = sim.Pageable
		}
	}
	return l, n.ErrCount() == 0
}

// moeSpec is a mixture of experts (experts:): each MoE layer's MLP is
// count experts, each token routed to topK of them; expert-parallel groups
// of parallel data-parallel ranks hold count/parallel experts each; one
// transformer block in every is an MoE layer, from the first (Megatron-LM's
// moe-layer-freq).
type moeSpec struct {
	count, topK, parallel, every int
	key                          spec.Node // for errors about the whole
	parallelKey                  *spec.Node
}

func (b *builder) moeSpec(n spec.Node) (*moeSpec, bool) {
	em, ok := n.Map("count", "top_k", "parallel", "every")
	if !ok {
		return nil, false
	}
	e := &moeSpec{topK: 2, every: 1, key: n}
	if x, ok := em.Require("count", "the experts of each MoE layer, such as 8"); ok {
		v, _ := x.Int(1, 100000)
		e.count = int(v)
	}
	if x, ok := em.Get("top_k"); ok {
		v, _ := x.Int(1, 100000)
		e.topK = int(v)
	}
	if x, ok := em.Get("parallel"); ok {
		v, _ := x.Int(1, 100000)
		e.parallel, e.parallelKey = int(v), &x
	}
	if x, ok := em.Get("every"); ok {
		v, _ := x.Int(1, 100000)
		e.every = int(v)
	}
	if n.ErrCount() == 0 && e.topK > e.count {
		// At top_k where it is given (the default, 2, is more than one
		// expert: at count).
		where := n
		if x, ok := em.Get("top_k"); ok {
			where = x
		} else if x, ok := em.Get("count"); ok {
			where = x
		}
		experts := fmt.Sprintf("%d experts", e.count)
		if e.count == 1 {
			experts = "1 expert"
		}
		where.Errorf("top_k %d is more than the %s; want 1 to %d (each token goes to top_k of the experts)", e.topK, experts, e.count)
	}
	return e, n.ErrCount() == 0
}

// moeLayers makes blocks 0, every, 2 every, ... of a preset model MoE
// layers (Megatron-LM's moe-layer-freq): each one's attention stays dense;
// its MLP (8 d^2 parameters, 16 d^2 FLOPs a token) becomes count experts of
// that size, each token going to top_k of them (GShard, Lepikhin et al.
// 2020; Switch, Fedus et al. 2021), spread over expert-parallel groups of
// parallel data-parallel ranks. Routing is taken
// as balanced: each GPU's experts process top_k times its own tokens. It
// returns how many layers it made MoE layers.
func (b *builder) moeLayers(e *moeSpec, layers []layer, preset bool, tensor int64, zero3, zeroOpt bool, dp int, batch, seq, elt float64) (int64, bool) {
	switch {
	case !preset:
		e.key.Errorf("experts need a preset model (%s): gpusim makes their blocks' MLPs the experts", presetNames())
	case tensor > 1:
		e.key.Errorf("experts with tensor: %d are not modelled: use tensor: 1 (the experts are spread over data-parallel ranks)", tensor)
	case zero3:
		e.key.Errorf("experts with sharding: zero3 are not modelled: use sharding: none")
	case zeroOpt:
		e.key.Errorf("experts with a sharded optimizer (sharding: zero1 or zero2) are not modelled: use sharding: none")
	}
	if e.key.ErrCount() > 0 {
		return 0, false
	}
	if e.parallel == 0 {
		e.parallel = gcd(dp, e.count)
	}
	if dp%e.parallel != 0 || e.count%e.parallel != 0 {
		where := e.key
		if e.parallelKey != nil {
			where = *e.parallelKey
		}
		where.Errorf("parallel %d must divide both the %d data-parallel ranks and the %d experts; use one of %s", e.parallel, dp, e.count, commonDivisors(dp, e.count))
		return 0, false
	}
	n, blocks := int64(0), 0
	for i := range layers {
		l := &layers[i]
		if l.d == 0 {
			continue
		}
		if blocks++; (blocks-1)%e.every != 0 {
			continue
		}
		d := l.d
		l.moe = true
		l.params -= 8 * d * d
		l.flops -= 16 * d * d * seq
		l.expertParams = 8 * d * d * float64(e.count/e.parallel)
		l.expertFlops = float64(e.topK) * 16 * d * d * seq
		l.a2aElems = float64(e.topK) * seq * d
		if a2a := batch * l.a2aElems * elt; a2a > 1e15 {
			e.key.Errorf("each all-to-all would send %s from a GPU, more than gpusim's limit of 1 PB: lower batch, seq or top_k", units.Format(a2a, units.Bytes))
			return 0, false
		}
		n++
	}
	return n, true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// kernelErr says what to lower where a training's kernel is past the
// simulator's range.
func kernelErr(err error) error {
	if errors.Is(err, models.ErrKernelRange) {
		return fmt.Errorf("a layer's %s: lower batch or seq, use a smaller model, or split it over more GPUs (tensor:, pipeline:)", strings.TrimSuffix(err.Error(), ": "+models.ErrKernelRange.Error()))
	}
	return err
}

// dtypeField reads a generator's dtype (bf16 where it gives none); false
// after an error.
func dtypeField(m *spec.Map) (models.DType, bool) {
	x, ok := m.Get("dtype")
	if !ok {
		return models.BF16, true
	}
	s, ok := x.Scalar()
	if !ok {
		return models.BF16, true // said by Scalar
	}
	d, ok := models.ParseDType(s)
	if !ok {
		x.Errorf("unknown dtype %q; dtypes: %s", s, dtypeNames())
	}
	return d, ok
}

// satTime is a + b, at most sim.MaxTime.
func satTime(a, b sim.Time) sim.Time {
	if b > sim.MaxTime-a {
		return sim.MaxTime
	}
	return a + b
}

// balancedSplit splits costs (each at least 0) into k contiguous
// non-empty runs, 1 <= k <= len(costs), whose largest sum is the least it
// can be (a binary search on that sum, sums capped at sim.MaxTime), and
// returns where each run begins and, last, len(costs). Of the splits
// that reach it, it fills the runs from the right (greedily, each as full
// as the least largest sum lets it be), leaving the first runs the
// lightest: under 1F1B the first stages hold the most activations. Runs
// the greedy split leaves over are cut off the left of the leftmost runs
// of two or more, which keeps the least largest sum.
func balancedSplit(costs []sim.Time, k int) []int {
	var lo, hi sim.Time
	for _, c := range costs {
		lo = max(lo, c)
		hi = satTime(hi, c)
	}
	// ends: where each run ends, from the right, greedily under limit.
	ends := func(limit sim.Time) []int {
		out := []int{len(costs)}
		acc := sim.Time(0)
		for i := len(costs) - 1; i >= 0; i-- {
			if satTime(acc, costs[i]) > limit && i+1 < out[len(out)-1] {
				out = append(out, i+1)
				acc = 0
			}
			acc = satTime(acc, costs[i])
		}
		return out
	}
	for lo < hi {
		if mid := lo + (hi-lo)/2; len(ends(mid)) <= k {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	cuts := ends(lo) // len(costs), then each run's start but the first's, descending
	starts := []int{0}
	for j := len(cuts) - 1; j >= 1; j-- {
		starts = append(starts, cuts[j])
	}
	for len(starts) < k {
		// The leftmost run of two or more layers gives up its first.
		for j := range starts {
			end := len(costs)
			if j+1 < len(starts) {
				end = starts[j+1]
			}
			if end-starts[j] >= 2 {
				starts = slices.Insert(starts, j+1, starts[j]+1)
				break
			}
		}
	}
	return append(starts, len(costs))
}

// pipeSchedule is the pipeline: schedule a training's stages of chunks
// model chunks follow.
func pipeSchedule(chunks int64) string {
	if chunks > 1 {
		return "interleaved"
	}
	return "1f1b"
}

// multiplesNear names the multiples of k nearest m up to hi: "8 or 12",
// or one where the other is below k or past hi.
func multiplesNear(m, k, hi int64) string {
	below, above := m/k*k, (m/k+1)*k
	switch {
	case below == 0:
		return strconv.FormatInt(above, 10)
	case above > hi:
		return strconv.FormatInt(below, 10)
	}
	return fmt.Sprintf("%d or %d", below, above)
}

// pipeStep is a forward or backward pass of one model chunk for one
// micro-batch on a stage of an interleaved pipeline.
type pipeStep struct {
	fwd          bool
	chunk, micro int
}

// interleavedSteps is stage r's order of work in a step of Megatron-LM's
// interleaved 1F1B (forward_backward_pipelining_with_interleaving) over p
// stages of v model chunks each and m micro-batches, a multiple of p:
// chunk c of stage r holds the model's virtual stage c p + r. Its k-th
// forward is chunk (k mod pv) / p, micro-batch (k / pv) p + k mod p; its
// k-th backward the same in reverse chunk order. Warm-up runs
// (p - r - 1) 2 + (v - 1) p forwards (all of them when m = p), then one
// forward and one backward alternate, and the backwards left end it.
func interleavedSteps(p, v, m, r int) []pipeStep {
	total := m * v
	warm := total
	if m != p {
		warm = min((p-r-1)*2+(v-1)*p, total)
	}
	at := func(k int, fwd bool) pipeStep {
		c := k % (p * v) / p
		if !fwd {
			c = v - 1 - c
		}
		return pipeStep{fwd, c, k/(p*v)*p + k%p}
	}
	steps := make([]pipeStep, 0, 2*total)
	for k := range warm {
		steps = append(steps, at(k, true))
	}
	for k := range total - warm {
		steps = append(steps, at(warm+k, true), at(k, false))
	}
	for k := total - warm; k < total; k++ {
		steps = append(steps, at(k, false))
	}
	return steps
}

// interleavedComm issues the sends and receives around one pass of an
// interleaved pipeline on stage r of p (v chunks) as Megatron-LM overlaps
// them (overlap_p2p_comm, its default): each direction between each pair
// of neighbouring stages is a channel of its own, with a stream of that
// name on both GPUs and a communicator, so a transfer waits only for its
// data and the transfers before it on its channel. A forward of chunk c
// receives from the stage before (the last stage's chunk c-1 for stage
// 0) and sends to the next; a backward the other way. pass issues the
// pass's compute on compute; transfer issues channel name's transfer of
// id from stage from to stage to, as rank 0 (sending) or 1, on stream.
// Ids are PREFIX/fwdQPLACE/cC/mM: Q the sending stage, C its chunk.
//
// A receive is posted (its kernel launched, holding its SMs) as
// Megatron-LM posts it, after the previous pass the same way ends (the
// first backward's after the pass before it): PyTorch makes NCCL's stream
// wait for the compute stream when it issues one. posted keeps the events
// recorded after the step's passes so far (reset it each step).
func interleavedComm(g gen, th *sim.Thread, gpu, compute, p, v, r int, st pipeStep, prefix, place string, posted *pipePosted, pass func() bool, transfer func(id, name string, from, to, stream, rank int)) bool {
	dir, prev, next := "fwd", (r+p-1)%p, (r+1)%p
	first := r == 0 && st.chunk == 0
	last := r == p-1 && st.chunk == v-1
	recvFrom, sendTo, recvChunk := prev, next, st.chunk-btoi(r == 0)
	in, out := !first, !last
	if !st.fwd {
		dir, recvFrom, sendTo, recvChunk = "bwd", next, prev, st.chunk+btoi(r == p-1)
		in, out = !last, !first
	}
	if in {
		name := fmt.Sprintf("pp-%s%d", dir, recvFrom)
		stream := g.stream(gpu, name)
		id := fmt.Sprintf("%s/%s%d%s/c%d/m%d", prefix, dir, recvFrom, place, recvChunk, st.micro)
		after := posted.any
		if same := posted.last[btoi(!st.fwd)]; same >= 0 {
			after = same
		}
		if after >= 0 {
			g.op(th, id+"/posted", sim.Op{Kind: sim.OpEventWait, Stream: stream, Event: after})
		}
		transfer(id, name, recvFrom, r, stream, 1)
		g.after(th, id+"/in", stream, compute)
	}
	if !pass() {
		return false
	}
	done := fmt.Sprintf("%s/stage%d%s/%s/c%d/m%d/done", prefix, r, place, dir, st.chunk, st.micro)
	posted.any = g.event(done)
	posted.last[btoi(!st.fwd)] = posted.any
	g.op(th, done, sim.Op{Kind: sim.OpEventRecord, Stream: compute, Event: posted.any})
	if out {
		name := fmt.Sprintf("pp-%s%d", dir, r)
		stream := g.stream(gpu, name)
		id := fmt.Sprintf("%s/%s%d%s/c%d/m%d", prefix, dir, r, place, st.chunk, st.micro)
		g.after(th, id+"/out", compute, stream)
		transfer(id, name, r, sendTo, stream, 0)
	}
	return true
}

// pipePosted is the events recorded after an interleaved stage's last
// pass (any) and its last forward and backward (last), or -1.
type pipePosted struct {
	any  int
	last [2]int
}

func newPipePosted() *pipePosted { return &pipePosted{any: -1, last: [2]int{-1, -1}} }

// commonDivisors lists the numbers that divide both a and b, "1, 2, 4".
func commonDivisors(a, b int) string {
	var out []string
	for d := 1; d <= min(a, b); d++ {
		if a%d == 0 && b%d == 0 {
			out = append(out, strconv.Itoa(d))
		}
	}
	return strings.Join(out, ", ")
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// loaderThreads adds the workers of one GPU's data loader: worker k prepares
// batches k, k+W, k+2W, ...; each waits for a free prefetch slot, spends the
// batch's CPU time, and posts the batch.
func (b *builder) loaderThreads(g gen, gpu int, name string, l *loaderSpec, batches int, batch float64, ready, free int) {
	per := sim.Time(math.Round(float64(l.sampleTime) * batch))
	for w := 0; w < l.workers; w++ {
		th := sim.Thread{Name: fmt.Sprintf("%s/loader%d", name, w), Host: b.m.GPUs[gpu].Host}
		for i := w; i < batches; i += l.workers {
			id := fmt.Sprintf("%s/batch%d", th.Name, i)
			g.op(&th, id+"/slot", sim.Op{Kind: sim.OpAwait, Sem: free})
			g.op(&th, id+"/prepare", sim.Op{Kind: sim.OpHost, Duration: per})
			g.op(&th, id+"/post", sim.Op{Kind: sim.OpSignal, Sem: ready, Count: 1})
		}
		if len(th.Ops) > 0 {
			b.p.Threads = append(b.p.Threads, th)
		}
	}
}

// pipeline expands a pipeline: block: one stage per GPU, micro-batches
// scheduled GPipe (all forwards, then all backwards) or 1F1B (warm-up
// forwards, then one forward and one backward in turn, then the remaining
// backwards), activations and gradients sent between neighbouring stages.
// key is its key, where a block that would expand past the op limit is
// refused.
func (b *builder) pipeline(n, key spec.Node) {
	pm, ok := n.Map("gpus", "schedule", "chunks", "microbatches", "forward", "backward", "activation_bytes", "steps")
	if !ok {
		return
	}
	g := gen{b: b, where: n.Pos()}
	var gpus []int
	gpusX, ok := pm.Require("gpus", "one GPU per stage: all, a count, or a list")
	if !ok {
		return
	}
	if gpus, ok = b.gpuList(gpusX); !ok {
		return
	}
	schedule := "1f1b"
	if x, ok := pm.Get("schedule"); ok {
		schedule, _ = x.Enum("gpipe", "1f1b", "interleaved")
	}
	micro := int64(8)
	microX, hasMicro := pm.Get("microbatches")
	if hasMicro {
		micro, _ = microX.Int(1, 100000)
	}
	// Interleaved 1F1B: each GPU runs chunks model chunks (Megatron-LM's
	// virtual pipeline stages), each a chunks-th of the stage's time; one
	// chunk is 1F1B, as Megatron-LM runs it without virtual stages.
	chunks := int64(1)
	if schedule == "interleaved" {
		chunks = 2
	}
	if x, ok := pm.Get("chunks"); ok {
		v, ok := x.Int(1, 1000)
		switch {
		case !ok:
		case schedule != "interleaved" && v > 1:
			x.Errorf("chunks: %d needs schedule: interleaved (with %s each GPU runs one stage)", v, schedule)
		default:
			chunks = v
		}
	}
	if schedule == "interleaved" && chunks == 1 {
		schedule = "1f1b"
	}
	if schedule == "interleaved" && len(gpus) < 2 {
		gpusX.Errorf("schedule: interleaved needs 2 GPUs or more: its model chunks go round the stages")
	} else if schedule == "interleaved" && micro%int64(len(gpus)) != 0 {
		at := n
		if hasMicro {
			at = microX
		}
		at.Errorf("the interleaved schedule runs micro-batches in groups of the %d stages: %d is not a multiple of %d; use %s", len(gpus), micro, len(gpus), multiplesNear(micro, int64(len(gpus)), 100000))
	}
	var fwd, bwd sim.Time
	fx, hasFwd := pm.Require("forward", "each stage's forward time per micro-batch, such as 10 ms")
	if hasFwd {
		fwd, _ = fx.Time(spec.NonNeg)
	}
	if x, ok := pm.Get("backward"); ok {
		bwd, _ = x.Time(spec.NonNeg)
	} else if bwd = 2 * fwd; hasFwd && fwd > sim.MaxTime/2 {
		fx.Errorf("%s: its backward, twice as long when backward is not given, is past the simulator's range (at most %s); give backward, or a forward of at most %s", fwd, sim.MaxTime, sim.MaxTime/2)
	}
	act := 0.0
	if x, ok := pm.Get("activation_bytes"); ok {
		if act, ok = x.Quantity(units.Bytes, spec.NonNeg); ok && act > 1e15 {
			x.Errorf("%s a micro-batch is more than gpusim's limit of 1 PB", units.Format(act, units.Bytes))
		}
	}
	steps := int64(1)
	if x, ok := pm.Get("steps"); ok {
		steps, _ = x.Int(1, 100000)
	}
	if n.ErrCount() > 0 {
		return
	}
	if !b.checkOps(key, pipelineOps(int64(len(gpus)), micro, steps, schedule, chunks), "a count") {
		return
	}
	p := len(gpus)
	M := int(micro)
	mods := b.sc.Topology.GPUModels
	// The plans of the transfers between each pair of neighbours, made
	// once: every micro-batch's transfers share them (a plan per op made a
	// 3-million-op pipeline take 2 GB to load; runs read plans only).
	acts, grads, xchgs := make([]*sim.CollPlan, p), make([]*sim.CollPlan, p), make([]*sim.CollPlan, p)
	chans := map[[2]int]*sim.CollPlan{} // interleaved: from stage, to stage
	once := func(plans []*sim.CollPlan, k int, build func() *sim.CollPlan) *sim.CollPlan {
		if plans[k] == nil {
			plans[k] = build()
		}
		return plans[k]
	}
	for s := range gpus {
		if at, taken := b.threadNames["stage"+strconv.Itoa(s)]; taken {
			key.Errorf("its thread stage%d has the name of the thread at %s: rename that thread (the pipeline names its threads stage0 to stage%d)", s, at, len(gpus)-1)
			return
		}
	}
	for s, gpu := range gpus {
		th := sim.Thread{Name: "stage" + strconv.Itoa(s), Host: b.m.GPUs[gpu].Host}
		th.Ops = make([]sim.Op, 0, steps*stageOps(int64(p), int64(s), micro, schedule, chunks))
		compute := g.stream(gpu, "compute")
		for st := 0; st < int(steps); st++ {
			pre := fmt.Sprintf("pipe/s%d", st)
			kern := func(m int, what string, d sim.Time) {
				g.op(&th, fmt.Sprintf("%s/stage%d/m%d/%s", pre, s, m, what), sim.Op{Kind: sim.OpKernel, Stream: compute, Duration: d})
			}
			// One-way transfers between neighbours: the sender issues rank 0,
			// the receiver rank 1, both with the same id.
			actPlan := func(from int) *sim.CollPlan {
				return once(acts, from, func() *sim.CollPlan { return models.SendPlan(b.m, mods, gpus[from], gpus[from+1], int64(act)) })
			}
			gradPlan := func(from int) *sim.CollPlan {
				return once(grads, from, func() *sim.CollPlan { return models.SendPlan(b.m, mods, gpus[from], gpus[from-1], int64(act)) })
			}
			recvForward := func(m int) {
				if s > 0 {
					g.collOp(&th, fmt.Sprintf("%s/act%d/m%d", pre, s, m), actPlan(s-1), compute, 1)
				}
			}
			sendForward := func(m int) {
				if s < p-1 {
					g.collOp(&th, fmt.Sprintf("%s/act%d/m%d", pre, s+1, m), actPlan(s), compute, 0)
				}
			}
			recvBackward := func(m int) {
				if s < p-1 {
					g.collOp(&th, fmt.Sprintf("%s/grad%d/m%d", pre, s, m), gradPlan(s+1), compute, 1)
				}
			}
			sendBackward := func(m int) {
				if s > 0 {
					g.collOp(&th, fmt.Sprintf("%s/grad%d/m%d", pre, s-1, m), gradPlan(s), compute, 0)
				}
			}
			// Exchanges between stage k and k+1 at k's steady iteration i:
			// k sends activation warm(k)+i and receives gradient i.
			exchange := func(k, i, rank int) {
				plan := once(xchgs, k, func() *sim.CollPlan {
					return models.ExchangePlan(b.m, mods, gpus[k], gpus[k+1], int64(act), int64(act))
				})
				g.collOp(&th, fmt.Sprintf("%s/xchg%d/i%d", pre, k, i), plan, compute, rank)
			}
			if schedule == "interleaved" {
				v := int(chunks)
				transfer := func(id, name string, from, to, stream, rank int) {
					key := [2]int{from, to}
					if chans[key] == nil {
						chans[key] = models.SendPlan(b.m, mods, gpus[from], gpus[to], int64(act))
					}
					g.collOp(&th, id, chans[key], stream, rank)
					th.Ops[len(th.Ops)-1].Comm = b.namedComm("pipe/" + name) // a channel's own
				}
				posted := newPipePosted()
				for _, ps := range interleavedSteps(p, v, M, s) {
					what, d := "fwd", fwd/sim.Time(v)
					if !ps.fwd {
						what, d = "bwd", bwd/sim.Time(v)
					}
					pass := func() bool {
						kern(ps.micro, fmt.Sprintf("c%d/%s", ps.chunk, what), d)
						return true
					}
					interleavedComm(g, &th, gpu, compute, p, v, s, ps, pre, "", posted, pass, transfer)
				}
			} else if schedule == "gpipe" {
				for m := 0; m < M; m++ {
					recvForward(m)
					kern(m, "fwd", fwd)
					sendForward(m)
				}
				for m := M - 1; m >= 0; m-- {
					recvBackward(m)
					kern(m, "bwd", bwd)
					sendBackward(m)
				}
			} else {
				// Megatron-LM's 1F1B without interleaving
				// (forward_backward_pipelining_without_interleaving).
				warm := min(p-s-1, M)
				remaining := M - warm
				for m := 0; m < warm; m++ {
					recvForward(m)
					kern(m, "fwd", fwd)
					sendForward(m)
				}
				if remaining > 0 {
					recvForward(warm)
				}
				for i := 0; i < remaining; i++ {
					kern(warm+i, "fwd", fwd)
					if s < p-1 {
						exchange(s, i, 0) // send_forward_recv_backward
					}
					kern(i, "bwd", bwd)
					if i == remaining-1 {
						sendBackward(i)
					} else if s > 0 {
						exchange(s-1, i, 1) // send_backward_recv_forward
					}
				}
				for i := 0; i < warm; i++ {
					recvBackward(remaining + i)
					kern(remaining+i, "bwd", bwd)
					sendBackward(remaining + i)
				}
			}
			g.op(&th, fmt.Sprintf("%s/stage%d/sync", pre, s), sim.Op{Kind: sim.OpSync, Sync: sim.SyncDevice, GPU: gpu})
		}
		b.p.Threads = append(b.p.Threads, th)
	}
}
