package scenarios

import (
	"errors"
	"fmt"
	"strings"

	"gpusim/internal/spec"
	"gpusim/internal/units"
	"gpusim/models"
	"gpusim/sim"
)

// inference expands an inference: block: a preset model generating tokens
// for a batch of prompts, each replica's layers split over tensor
// consecutive GPUs of the list (Megatron-LM's tensor parallelism, as vLLM
// and TensorRT-LLM run it), one host thread per GPU (a worker process
// each). A prefill pass over the prompts gives the first token; each
// further token is a decode step over one token a sequence, reading the
// weights and the KV cache. After each pass every thread copies the
// sampled tokens to the host and waits for them (the scheduler needs them
// to go on), so the host's launches and its sync latency are part of each
// token's time; graphs: true launches each decode step as one CUDA graph
// (vLLM's and TensorRT-LLM's default), the prefill kernel by kernel.
//
// Per transformer block of width d, for b sequences of context c (tokens in
// the cache, the new one's included), on each of t GPUs:
//   - attention: 8 d^2 + 4 c d FLOPs a token, c the tokens it attends to,
//     itself included (the Q, K, V and output projections, 2 per weight, and Q K^T
//     and the scores times V over the tokens it attends to): causal, so
//     in prefill token i of s attends to i, 2 s (s + 1) d in all rather
//     than 4 s^2 d, as causal attention kernels skip the masked half
//     (Dao 2023, "FlashAttention-2": its causal kernels skip the blocks
//     the mask covers, and its benchmarks count causal attention at half
//     the FLOPs); reading its 4 d^2 weights / t, the
//     KV cache (2 c d values a sequence / t in decode; in prefill its 2 s d
//     written) and its input and output (2 d a token);
//   - the MLP: 16 d^2 FLOPs a token, its 8 d^2 weights / t, input and
//     output;
//   - with t > 1 an all-reduce of the block's output after each (b d
//     values a decode step, b s d in prefill).
//
// Before the blocks, the embedding: the token's row of the vocabulary
// (vocabulary-parallel: each GPU holds V / t rows and zeroes the others'
// tokens), all-reduced (b d values a decode step, b s d in prefill) where
// t > 1, as vLLM's VocabParallelEmbedding does, then its position's row
// added (GPT-2's learned positions, not split). gpusim runs the lookups
// and the sum as one kernel before the all-reduce: the all-reduce and the
// bytes are the same. The LM head computes the last token's
// logits only (2 V d FLOPs a sequence, V d weights / t,
// vocabulary-parallel), all-gathered (b V values) where t > 1; the
// sampling kernels are left out. The copy of the tokens is 8 bytes a
// sequence (int64 ids).
func (b *builder) inference(n, key spec.Node) {
	im, ok := n.Map("gpus", "model", "tensor", "batch", "prompt", "tokens", "dtype", "graphs", "host_per_kernel", "host_per_collective", "host_per_step", "algorithm", "protocol")
	if !ok {
		return
	}
	if b.p.Work != nil || len(b.p.Threads) > 0 {
		key.Errorf("runs alone: its tokens a second and times a token are the run's, so a scenario with one has no threads:, training: or pipeline:; run them as two scenarios")
		return
	}
	g := gen{b: b, where: n.Pos()}
	gx, ok := im.Require("gpus", "the GPUs serving: all, a count, or a list")
	if !ok {
		return
	}
	gpus, ok := b.gpuList(gx)
	if !ok {
		return
	}
	mx, ok := im.Require("model", "a preset: "+presetNames())
	if !ok {
		return
	}
	if !mx.IsScalar() {
		mx.Errorf("inference takes a preset model: %s (a list of layers is for training:)", presetNames())
		return
	}
	name, _ := mx.Scalar()
	preset, ok := transformerPresets[name]
	if !ok {
		mx.Errorf("unknown model %q; presets: %s", name, presetNames())
		return
	}
	tensor := int64(len(gpus))
	if x, ok := im.Get("tensor"); ok {
		if tensor, ok = x.Int(1, int64(len(gpus))); ok && int64(len(gpus))%tensor != 0 {
			x.Errorf("%d does not divide the %d GPUs serving into tensor-parallel groups; use one of %s", tensor, len(gpus), commonDivisors(len(gpus), len(gpus)))
			return
		}
		if why := headsProblem(name, tensor, len(gpus)); ok && why != "" {
			x.Errorf("%s", why)
			return
		}
	} else if why := headsProblem(name, tensor, len(gpus)); why != "" {
		// The default, all the GPUs.
		mx.Errorf("with tensor: %d (all the GPUs, the default), %s; give tensor:", tensor, why)
		return
	}
	intField := func(k string, def, lo, hi int64) int64 {
		if x, ok := im.Get(k); ok {
			v, _ := x.Int(lo, hi)
			return v
		}
		return def
	}
	batch := intField("batch", 1, 1, 1<<20)
	prompt := intField("prompt", 512, 1, 1<<24)
	tokens := intField("tokens", 128, 1, 100000)
	if ctx := prompt + tokens - 1; ctx > gptPositions {
		where := key.Pos()
		if x, ok := im.Get("prompt"); ok {
			where = x.Pos()
		} else if x, ok := im.Get("tokens"); ok {
			where = x.Pos()
		}
		b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("%s: inference: a context of %d tokens (the prompt and the tokens but the last), more than the GPT-3 presets' %d: they run as a model of the same shape with a longer context", where, ctx, gptPositions))
	}
	dtype, ok := dtypeField(im)
	if !ok {
		return
	}
	graphs := true
	if x, ok := im.Get("graphs"); ok {
		graphs, _ = x.Bool()
	}
	// The framework's host time for each kernel and collective it launches
	// outside a graph, beside the driver's launch (the host's
	// api_overhead). On GB200, Inductor spends 6.8-9.1 us a kernel against
	// 3.0 us for a bare cuLaunchKernel (measured.md §4,
	// meta-pytorch/tritonbench#1017): 3.8-6.1 more, 5 us; PyTorch spends
	// 20-30 us on an all_reduce call on H200 and B200 (§4, stas00's
	// ml-engineering), ~3 of it the launch: 22 us. A graph's replay skips
	// both. gpusim runs a block's attention and its MLP as one kernel each,
	// but the framework launches several: attentionLaunches and mlpLaunches
	// (and the head's two), each with its framework and driver time on the
	// host and its kernel_overhead on the GPU.
	hostKernel, hostColl := 5*sim.Microsecond, 22*sim.Microsecond
	if x, ok := im.Get("host_per_kernel"); ok {
		hostKernel, _ = x.Time(spec.NonNeg)
	}
	if x, ok := im.Get("host_per_collective"); ok {
		hostColl, _ = x.Time(spec.NonNeg)
	}
	// The serving engine's own host time each step, before it launches the
	// step (scheduling the batch, preparing its inputs, turning the last
	// step's logits into tokens): none unless given, as no published
	// measurement here gives it apart from the rest (measured.md has
	// launch and collective costs only).
	var hostStep sim.Time
	if x, ok := im.Get("host_per_step"); ok {
		hostStep, _ = x.Time(spec.NonNeg)
	}
	algo, proto := "", ""
	if x, ok := im.Get("algorithm"); ok {
		algo, _ = x.Enum(models.Algorithms...)
	}
	if x, ok := im.Get("protocol"); ok {
		proto, _ = x.Enum(models.Protocols...)
	}
	if n.ErrCount() > 0 {
		return
	}
	layers, d := int64(preset[0]), float64(preset[1])
	coll := int64(0)
	if tensor > 1 {
		coll = 1
	}
	// Each rank's ops: a pass is the embedding and its all-reduce, two
	// kernels and their all-reduces a block, the head and its gather, the
	// copy and the sync; outside a graph, a host op before each kernel
	// and collective whose framework and launch time is not zero.
	perRank := func(gpu int) int64 {
		api := b.m.Hosts[b.m.GPUs[gpu].Host].APIOverhead
		launched := satMul(2*layers+2, 1+coll) // kernels and collectives
		host := satAdd(satMul(layers, int64(btoi(launchHost(attentionLaunches, hostKernel, api) > 0)+btoi(launchHost(mlpLaunches, hostKernel, api) > 0))),
			int64(btoi(launchHost(headLaunches, hostKernel, api) > 0)+btoi(launchHost(embedLaunches(tensor), hostKernel, api) > 0)))
		host = satAdd(host, satMul(2*layers+2, coll*int64(btoi(hostColl > 0))))
		step := 2 + int64(btoi(hostStep > 0)) // the tokens' copy, the sync, the engine's host op
		eager, decode := satAdd(launched, host)+step, satAdd(launched, host)+step
		if graphs {
			decode = launched + step
		}
		return satAdd(eager, satMul(tokens-1, decode))
	}
	ops := int64(0)
	for _, gpu := range gpus {
		ops = satAdd(ops, perRank(gpu))
	}
	if ops > b.opt.MaxOps {
		key.Errorf("expands to %d ops, more than the limit of %d; lower tokens%s", ops, b.opt.MaxOps, b.raise())
		return
	}
	const vocab = 50257
	elt := float64(dtype.Size())
	// Activations, the KV cache and what GPUs send each other are at least
	// bf16: FP8 and int8 serving quantizes the weights and their GEMMs,
	// and keeps the rest in bf16 (as training does: generators.go, celt).
	celt := max(elt, 2)
	tp, bt, s := float64(tensor), float64(batch), float64(prompt)
	if v := bt * s * d * celt; v > 1e15 {
		key.Errorf("a prefill block's output (batch x prompt x d_model values) would be %s, more than gpusim's limit of 1 PB: lower batch or prompt", units.Format(v, units.Bytes))
		return
	}
	b.inferenceMemory(key.Pos(), gpus, int(tensor), layers, d, vocab, bt, s+float64(tokens), elt, celt)
	replicas := len(gpus) / int(tensor)
	w := &sim.Work{Kind: "inference", Steps: int(tokens), Samples: float64(replicas) * bt, Tokens: float64(replicas) * bt * float64(tokens), DType: string(dtype), GPUs: len(gpus)}
	b.p.Work = w
	var errs collErrs // said once every collective is built
	defer b.sayCollErrs(n, im, &errs)
	for r := 0; r < replicas; r++ {
		group := gpus[r*int(tensor) : (r+1)*int(tensor)]
		plans := map[string]*sim.CollPlan{}
		plan := func(kind string, bytes float64) *sim.CollPlan {
			k := kind + fmt.Sprint(bytes)
			if p, ok := plans[k]; ok {
				return p
			}
			spec := models.CollSpec{Kind: kind, GPUs: group, Bytes: int64(bytes), Algorithm: algo, Protocol: proto, InPlace: true}
			if kind != models.AllReduce {
				// A forced algorithm and protocol are the all-reduces';
				// the logits' gather keeps NCCL's own.
				spec.Algorithm, spec.Protocol = "", ""
			}
			spec.MaxTasks = b.opt.PlanTasks
			p, err := models.BuildCollective(b.m, b.sc.Topology.GPUModels, spec)
			errs.built(spec, err)
			if err != nil {
				p = nil
			} else {
				b.warnMultiNode(n.Pos(), group)
			}
			plans[k] = p
			return p
		}
		for k, gpu := range group {
			gm := b.sc.Topology.GPUModels[gpu]
			th := sim.Thread{Name: "infer/" + b.m.GPUs[gpu].Name, Host: b.m.GPUs[gpu].Host, Ops: make([]sim.Op, 0, perRank(gpu))}
			compute := g.stream(gpu, "compute")
			eager := true // the pass is launched op by op
			api := b.m.Hosts[b.m.GPUs[gpu].Host].APIOverhead
			kern := func(id string, flops, bytes float64, launches int64) bool {
				dur, err := models.KernelTime(gm, flops, dtype, bytes, 1)
				if err != nil {
					n.Errorf("%v", inferenceKernelErr(err))
					return false
				}
				dur = satTime(dur, satMulTime(gm.KernelOverhead, launches-1))
				if h := launchHost(launches, hostKernel, api); eager && h > 0 {
					g.op(&th, id+"/host", sim.Op{Kind: sim.OpHost, Duration: h})
				}
				g.op(&th, id, sim.Op{Kind: sim.OpKernel, Stream: compute, Duration: dur, SMShare: 1, MemoryBound: models.MemoryBound(gm, flops, dtype, bytes)})
				return true
			}
			// collOp issues the rank's part of collective what (its host op
			// is the thread's, its id the replica's: the ranks meet by it).
			collOp := func(what, kind string, bytes float64) {
				if tensor > 1 {
					if eager && hostColl > 0 {
						g.op(&th, th.Name+"/"+what+"/host", sim.Op{Kind: sim.OpHost, Duration: hostColl})
					}
					g.collOp(&th, fmt.Sprintf("infer/r%d/%s", r, what), plan(kind, bytes), compute, k)
				}
			}
			// pass issues one pass over toks tokens a sequence with c
			// tokens in the cache at its end.
			pass := func(what string, toks, c float64) bool {
				eager = !graphs || what == "prefill"
				pre := th.Name + "/" + what // the thread's ops
				if hostStep > 0 {
					g.op(&th, pre+"/engine", sim.Op{Kind: sim.OpHost, Duration: hostStep})
				}
				first := len(th.Ops)
				act := bt * toks * d * celt // a block's input, or output
				// The embedding reads this GPU's share of the tokens'
				// rows and the positions' and writes each, then the sum
				// reads both and writes it: act (6 + 1/t); split over
				// GPUs, the zeroing of the others' tokens reads and
				// writes the output once more.
				embed := act * (6 + 1/tp)
				if tensor > 1 {
					embed += 2 * act
				}
				if !kern(pre+"/embed", 0, embed, embedLaunches(tensor)) {
					return false
				}
				collOp(what+"/embed/all-reduce", models.AllReduce, act)
				for l := int64(0); l < layers; l++ {
					kv := bt * 2 * c * d * celt / tp // decode reads the cache
					if what == "prefill" {
						kv = bt * 2 * toks * d * celt / tp // prefill writes it
					}
					// The pass's tokens attend to c-toks+1 ... c tokens.
					attended := toks * (2*c - toks + 1) / 2
					if !kern(fmt.Sprintf("%s/L%d/attn", pre, l), bt*(8*d*d*toks+4*d*attended)/tp, 4*d*d*elt/tp+kv+2*act, attentionLaunches) {
						return false
					}
					collOp(fmt.Sprintf("%s/L%d/attn/all-reduce", what, l), models.AllReduce, act)
					if !kern(fmt.Sprintf("%s/L%d/mlp", pre, l), bt*toks*16*d*d/tp, 8*d*d*elt/tp+2*act, mlpLaunches) {
						return false
					}
					collOp(fmt.Sprintf("%s/L%d/mlp/all-reduce", what, l), models.AllReduce, act)
				}
				if !kern(pre+"/head", bt*2*vocab*d/tp, vocab*d*elt/tp+bt*(d+vocab/tp)*celt, headLaunches) {
					return false
				}
				collOp(what+"/logits", models.AllGather, bt*vocab*celt)
				if graphs && what != "prefill" {
					th.Ops[first].GraphOps = len(th.Ops) - first
				}
				g.op(&th, pre+"/tokens", sim.Op{Kind: sim.OpCopy, Stream: compute, Src: b.m.GPUs[gpu].Node, Dst: b.m.Hosts[b.m.GPUs[gpu].Host].Node, Bytes: 8 * batch, Memory: sim.Pinned})
				g.op(&th, pre+"/sync", sim.Op{Kind: sim.OpSync, Sync: sim.SyncStream, Stream: compute})
				if r == 0 && k == 0 {
					if what == "prefill" {
						w.FirstToken = pre + "/sync"
					}
					w.LastToken = pre + "/sync"
				}
				return true
			}
			if !pass("prefill", s, s) {
				return
			}
			for t := int64(1); t < tokens; t++ {
				if !pass(fmt.Sprintf("t%d", t), 1, s+float64(t)) {
					return
				}
			}
			b.p.Threads = append(b.p.Threads, th)
		}
	}
}

// gptPositions is the GPT-3 presets' learned position embeddings, one a
// token of their 2048-token context (Brown et al. 2020, section 2.1).
const gptPositions = 2048

// inferenceMemory warns, once, when a GPU would hold more than its memory:
// its share of the weights (12 d^2 a block and the embedding's V d, which
// the head shares, split over the t GPUs of its group, and the position
// embeddings whole; in elt bytes), of the KV cache (2 d values a token a
// block, for b sequences of ctx tokens but the last; in celt bytes), and
// the gathered logits (b V, fp32 as vLLM keeps them). Activations are left
// out.
func (b *builder) inferenceMemory(where string, gpus []int, tensor int, layers int64, d, vocab, bt, ctx, elt, celt float64) {
	// The blocks' weights and the embedding, which the head shares (GPT's
	// tied embedding), split by tensor; the 2048 positions' embeddings
	// whole on each GPU (not vocabulary-parallel).
	weights := ((12*d*d*float64(layers)+vocab*d)/float64(tensor) + gptPositions*d) * elt
	// The cache holds every token but the last generated, which is
	// sampled and never run through the blocks.
	cache := 2 * float64(layers) * d * max(ctx-1, 0) * bt * celt / float64(tensor)
	logits := bt * vocab * 4
	for _, gpu := range gpus {
		gm := b.sc.Topology.GPUModels[gpu]
		if gm.MemoryBytes <= 0 || weights+cache+logits <= float64(gm.MemoryBytes) {
			continue
		}
		gib := float64(int64(1) << 30)
		ways := []string{"a smaller batch", "fewer tokens or a shorter prompt"}
		if tensor < len(gpus) {
			ways = append([]string{"more tensor parallelism (tensor:)"}, ways...)
		}
		if weights > float64(gm.MemoryBytes) {
			ways = []string{"more GPUs, or GPUs with more memory"}
		}
		b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("%s: inference: a GPU needs about %.4g GiB (weights %.4g GiB, KV cache %.4g GiB, logits %.4g GiB), more than the %.4g GiB of %s (%s): it would not fit; try %s",
			where, (weights+cache+logits)/gib, weights/gib, cache/gib, logits/gib, float64(gm.MemoryBytes)/gib, b.m.GPUs[gpu].Name, gm.Name, strings.Join(ways, ", ")))
		return
	}
}

// The kernels the framework launches for what gpusim runs as one: a
// block's attention (its layer norm, the QKV and output GEMMs, the KV
// cache write, the attention kernel and the residual add), its MLP (layer
// norm, two GEMMs, the activation, the residual add) and the head (the
// final layer norm and the GEMM).
const attentionLaunches, mlpLaunches, headLaunches = 6, 5, 2

// embedLaunches is the kernels the framework launches for the embedding:
// the lookup of the tokens' rows, of the positions' and their sum (vLLM's
// GPT-2 forward); vocabulary-parallel, two more: the mask of the tokens
// another GPU holds and the zeroing of their rows
// (VocabParallelEmbedding.forward).
func embedLaunches(tensor int64) int64 {
	if tensor > 1 {
		return 5
	}
	return 3
}

// launchHost is the host time of launching n kernels outside a graph, the
// framework's per each and the driver's for all but the one the kernel op
// pays itself.
func launchHost(n int64, framework, api sim.Time) sim.Time {
	return satTime(satMulTime(framework, n), satMulTime(api, n-1))
}

// inferenceKernelErr says what to change when a kernel of the generation
// is past the simulator's range.
func inferenceKernelErr(err error) error {
	if errors.Is(err, models.ErrKernelRange) {
		return fmt.Errorf("a layer's %s: lower batch or prompt, use a smaller model, or split it over more GPUs (tensor:)", strings.TrimSuffix(err.Error(), ": "+models.ErrKernelRange.Error()))
	}
	return err
}

// satMulTime is t x n (n >= 0), at most sim.MaxTime.
func satMulTime(t sim.Time, n int64) sim.Time {
	if n > 0 && t > sim.MaxTime/sim.Time(n) {
		return sim.MaxTime
	}
	return t * sim.Time(max(n, 0))
}
