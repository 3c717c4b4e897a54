// A stand-in for libcuda.so.1, for testing gpusim's CUDA binding (hw/cuda.go)
// and the backend above it on machines without an NVIDIA driver: every entry
// point the binding looks up, with the signatures of cuda.h (CUDA 12/13),
// doing something a test can check through the binding itself. Device memory
// is host memory from malloc, so copies move real bytes: their first MiB (so
// that big buffers, never touched beyond it, cost no memory). As in CUDA, the
// current context belongs to the calling OS thread: every call that works in
// a context fails with CUDA_ERROR_INVALID_CONTEXT where the calling thread
// has none current, and a launch, wait or event record also where its stream
// (and the event recorded) belong to another context. So does a copy, which
// is stricter than CUDA (it runs a copy on another device's stream): gpusim
// issues each copy on a stream of the context current, and this checks it. By default events read a counter that
// each record advances by a quarter of a millisecond, so elapsed times are
// exact; with fake_set("realclock", 1) they read CLOCK_MONOTONIC, and the spin
// kernel (gpusim_spin) runs during its launch call, spinning for the
// nanoseconds asked and taking its stamps' start down and stop up to that
// clock's readings (as every block of the kernel does), so the
// backend can run whole programs. fake_set and fake_get let a test change
// results and read back what a call received. Built by the tests with the
// system C compiler (cuda_lib_test.go); not part of gpusim.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <pthread.h>

typedef int CUresult;
typedef int CUdevice;
typedef uintptr_t CUcontext, CUstream, CUevent, CUmodule, CUfunction;
typedef uint64_t CUdeviceptr;

#define NDEV 2
#define MAXP 8

static int init_result = 0;                 // what cuInit returns
static uint64_t mem_limit = 1ull << 30;     // largest cuMemAlloc that succeeds
static uint64_t mem_total = 80ull << 30;    // what cuMemGetInfo reports as total
static uint64_t allocated = 0;              // device bytes allocated
static int nparams = 0;                     // parameters cuLaunchKernel reads
static int retains[NDEV];                   // primary context retains
static int peer_on[NDEV][NDEV];             // peer access enabled
static __thread CUcontext current = 0;       // per OS thread, as in CUDA
static int realclock = 0;                   // events and spins on CLOCK_MONOTONIC
static uint64_t host_allocated = 0;         // pinned host bytes allocated
static long long context_errors = 0;        // calls refused for their context
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t next_handle = 0x100;
static double clock_ms = 0;                 // advanced by each event record

// What the last call of each kind received.
static struct {
	unsigned gx, gy, gz, bx, by, bz, shared;
	CUstream stream;
	CUfunction f;
	uint64_t params[MAXP];
	int extra_null;
	long long count;
} launch;
static struct {
	int kind; // 1 HtoD, 2 DtoH, 3 DtoD, 4 Peer
	CUstream stream;
	CUcontext dctx, sctx;
	uint64_t bytes;
} copy;
static unsigned host_alloc_flags, stream_flags, event_flags, wait_flags, peer_flags;
static int func_attr, func_attr_value;
static CUevent last_wait_event;
static CUstream last_wait_stream;
static CUstream last_record_stream;
static long long records, syncs;

typedef struct { double ms; int recorded; CUcontext ctx; } event;
typedef struct { CUcontext ctx; } stream;

static uint64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// The context a stream handle belongs to (0, the legacy default stream,
// belongs to the current one).
static CUcontext stream_ctx(CUstream s) { return s ? ((stream *)s)->ctx : current; }

static CUresult wrong_context(void) {
	pthread_mutex_lock(&mu);
	context_errors++;
	pthread_mutex_unlock(&mu);
	return 201; // CUDA_ERROR_INVALID_CONTEXT
}

// Allocations carry their size in a 16-byte header, so frees can be counted.
static void *alloc(size_t n, uint64_t *counter) {
	char *m = malloc(n + 16);
	if (!m) return 0;
	*(size_t *)m = n;
	pthread_mutex_lock(&mu);
	*counter += n;
	pthread_mutex_unlock(&mu);
	return m + 16;
}
static void release(void *p, uint64_t *counter) {
	if (!p) return;
	char *m = (char *)p - 16;
	pthread_mutex_lock(&mu);
	*counter -= *(size_t *)m;
	pthread_mutex_unlock(&mu);
	free(m);
}

// FAKECUDA_REALCLOCK=1 in the environment starts the library in real-clock
// mode, for running gpusim itself against it (LD_LIBRARY_PATH).
__attribute__((constructor)) static void fake_init(void) {
	const char *e = getenv("FAKECUDA_REALCLOCK");
	if (e && *e == '1') realclock = 1;
}

int fake_set(const char *what, int64_t v) {
	if (!strcmp(what, "init")) init_result = (int)v;
	else if (!strcmp(what, "mem_limit")) mem_limit = (uint64_t)v;
	else if (!strcmp(what, "nparams")) nparams = (int)v;
	else if (!strcmp(what, "realclock")) realclock = (int)v;
	else return -1;
	return 0;
}

int64_t fake_get(const char *what) {
#define G(name, expr) if (!strcmp(what, name)) return (int64_t)(expr)
	G("launch.gx", launch.gx); G("launch.gy", launch.gy); G("launch.gz", launch.gz);
	G("launch.bx", launch.bx); G("launch.by", launch.by); G("launch.bz", launch.bz);
	G("launch.shared", launch.shared); G("launch.stream", launch.stream); G("launch.f", launch.f);
	G("launch.extra_null", launch.extra_null); G("launch.count", launch.count);
	G("launch.p0", launch.params[0]); G("launch.p1", launch.params[1]); G("launch.p2", launch.params[2]);
	G("copy.kind", copy.kind); G("copy.stream", copy.stream); G("copy.dctx", copy.dctx);
	G("copy.sctx", copy.sctx); G("copy.bytes", copy.bytes);
	G("host_alloc_flags", host_alloc_flags); G("stream_flags", stream_flags);
	G("event_flags", event_flags); G("wait_flags", wait_flags); G("peer_flags", peer_flags);
	G("func_attr", func_attr); G("func_attr_value", func_attr_value);
	G("wait.event", last_wait_event); G("wait.stream", last_wait_stream);
	G("record.stream", last_record_stream); G("records", records); G("syncs", syncs);
	G("current", current); G("allocated", allocated); G("host_allocated", host_allocated);
	G("context_errors", context_errors);
	G("retains0", retains[0]); G("retains1", retains[1]);
#undef G
	return -1;
}

CUresult cuInit(unsigned flags) { return flags ? 1 : init_result; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = NDEV; return 0; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	if (ordinal < 0 || ordinal >= NDEV) return 101; // CUDA_ERROR_INVALID_DEVICE
	*d = ordinal;
	return 0;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
	snprintf(name, (size_t)len, "Fake GPU %d", d);
	return 0;
}
// Attribute a of device d is a*100+d: a test can tell both arguments arrived.
CUresult cuDeviceGetAttribute(int *v, int a, CUdevice d) { *v = a * 100 + d; return 0; }
CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) { *b = ((size_t)d + 1) << 34; return 0; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
	if (d < 0 || d >= NDEV) return 101;
	retains[d]++;
	*c = 0x1000 + (CUcontext)d;
	return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	if (d < 0 || d >= NDEV || retains[d] == 0) return 201; // CUDA_ERROR_INVALID_CONTEXT
	retains[d]--;
	return 0;
}
CUresult cuCtxSetCurrent(CUcontext c) { current = c; return 0; }
CUresult cuCtxSynchronize(void) { syncs++; return current ? 0 : 201; }
CUresult cuMemGetInfo_v2(size_t *free_, size_t *total) {
	if (!current) return wrong_context();
	*free_ = mem_total - allocated;
	*total = mem_total;
	return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
	if (!current) return wrong_context();
	if (n > mem_limit) return 2; // CUDA_ERROR_OUT_OF_MEMORY
	void *m = alloc(n, &allocated);
	if (!m) return 2;
	*p = (CUdeviceptr)(uintptr_t)m;
	return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
	if (!current) return wrong_context();
	release((void *)(uintptr_t)p, &allocated);
	return 0;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) {
	if (!current) return wrong_context();
	host_alloc_flags = flags;
	*p = alloc(n, &host_allocated);
	return *p ? 0 : 2;
}
CUresult cuMemFreeHost(void *p) {
	if (!current) return wrong_context();
	release(p, &host_allocated);
	return 0;
}
CUresult cuDeviceCanAccessPeer(int *ok, CUdevice d, CUdevice peer) {
	*ok = d != peer && d >= 0 && d < NDEV && peer >= 0 && peer < NDEV;
	return 0;
}
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags) {
	int d = (int)(current - 0x1000), q = (int)(peer - 0x1000);
	if (d < 0 || d >= NDEV || q < 0 || q >= NDEV) return 201;
	peer_flags = flags;
	if (peer_on[d][q]) return 704; // CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
	peer_on[d][q] = 1;
	return 0;
}
#define COPIED(n) ((n) < (1u << 20) ? (n) : (1u << 20))

static CUresult copied(int kind, CUstream s, size_t n) {
	if (!current || stream_ctx(s) != current) return wrong_context();
	copy.kind = kind;
	copy.stream = s;
	copy.bytes = n;
	return 0;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
	memcpy((void *)(uintptr_t)dst, src, COPIED(n));
	return copied(1, s, n);
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) {
	memcpy(dst, (void *)(uintptr_t)src, COPIED(n));
	return copied(2, s, n);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
	memcpy((void *)(uintptr_t)dst, (void *)(uintptr_t)src, COPIED(n));
	return copied(3, s, n);
}
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s) {
	memcpy((void *)(uintptr_t)dst, (void *)(uintptr_t)src, COPIED(n));
	copy.dctx = dctx;
	copy.sctx = sctx;
	return copied(4, s, n);
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
	memcpy((void *)(uintptr_t)dst, src, COPIED(n));
	return copied(1, 0, n);
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
	memcpy(dst, (void *)(uintptr_t)src, COPIED(n));
	return copied(2, 0, n);
}
CUresult cuStreamCreate(CUstream *s, unsigned flags) {
	if (!current) return wrong_context();
	stream_flags = flags;
	stream *st = malloc(sizeof *st);
	if (!st) return 2;
	st->ctx = current;
	*s = (CUstream)st;
	return 0;
}
CUresult cuStreamDestroy_v2(CUstream s) {
	if (!s) return 400;
	if (!current) return wrong_context();
	free((void *)s);
	return 0;
}
CUresult cuStreamSynchronize(CUstream s) {
	(void)s;
	if (!current) return wrong_context();
	syncs++;
	return 0;
}
// The event may belong to another context (a wait across GPUs); the stream
// may not.
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
	if (!current || stream_ctx(s) != current) return wrong_context();
	last_wait_stream = s;
	last_wait_event = e;
	wait_flags = flags;
	return 0;
}
CUresult cuEventCreate(CUevent *e, unsigned flags) {
	if (!current) return wrong_context();
	event_flags = flags;
	event *ev = calloc(1, sizeof *ev);
	if (!ev) return 2;
	ev->ctx = current;
	*e = (CUevent)ev;
	return 0;
}
CUresult cuEventDestroy_v2(CUevent e) {
	if (!current) return wrong_context();
	free((void *)e);
	return 0;
}
CUresult cuEventRecord(CUevent e, CUstream s) {
	event *ev = (event *)e;
	if (!ev) return 400; // CUDA_ERROR_INVALID_HANDLE
	// cuda.h: the event and the stream must belong to the same context.
	if (ev->ctx != stream_ctx(s) || !current) return wrong_context();
	pthread_mutex_lock(&mu);
	if (realclock) {
		ev->ms = (double)now_ns() / 1e6;
	} else {
		clock_ms += 0.25;
		ev->ms = clock_ms;
	}
	ev->recorded = 1;
	last_record_stream = s;
	records++;
	pthread_mutex_unlock(&mu);
	return 0;
}
CUresult cuEventSynchronize(CUevent e) {
	if (!current) return wrong_context();
	syncs++;
	return e ? 0 : 400;
}
CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end) {
	if (!current) return wrong_context();
	event *a = (event *)start, *b = (event *)end;
	if (!a || !b) return 400;
	if (!a->recorded || !b->recorded) return 600; // CUDA_ERROR_NOT_READY
	*ms = (float)(b->ms - a->ms);
	return 0;
}
// A module whose image mentions "error" fails as ptxas would, writing its log
// where the options say (CU_JIT_ERROR_LOG_BUFFER = 5, its size = 6).
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, int *opts, void **vals) {
	if (!current) return wrong_context();
	if (strstr((const char *)image, "FAKE_JIT_ERROR")) {
		char *buf = 0;
		size_t size = 0;
		for (unsigned i = 0; i < n; i++) {
			if (opts[i] == 5) buf = vals[i];
			if (opts[i] == 6) size = (size_t)(uintptr_t)vals[i];
		}
		if (buf && size) snprintf(buf, size, "ptxas fatal   : Unresolved extern function 'error'");
		return 218; // CUDA_ERROR_INVALID_PTX
	}
	*m = next_handle++;
	return 0;
}
// Functions exist by these names, each its own handle.
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
	if (!current) return wrong_context();
	static const char *names[] = {"gpusim_spin", "gpusim_copy", "gpusim_fma"};
	for (int i = 0; i < 3; i++) {
		if (!strcmp(name, names[i])) {
			*f = (m << 4) + (CUfunction)i + 1;
			return 0;
		}
	}
	return 500; // CUDA_ERROR_NOT_FOUND
}
CUresult cuModuleUnload(CUmodule m) {
	if (!current) return wrong_context();
	return m ? 0 : 400;
}
CUresult cuFuncSetAttribute(CUfunction f, int a, int v) {
	if (!current) return wrong_context();
	func_attr = a;
	func_attr_value = v;
	return f ? 0 : 400;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t shared) {
	if (!current) return wrong_context();
	if (!f || block <= 0) return 400;
	*n = block > 1024 ? 0 : 2048 / block; // an SM of 2048 threads, as Hopper's
	return 0;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream s, void **params, void **extra) {
	if (!f) return 400;
	if (!current || stream_ctx(s) != current) return wrong_context();
	if (realclock && (f & 0xf) == 1) { // gpusim_spin(duration_ns, stamps)
		uint64_t ns = *(uint64_t *)params[0], *stamps = (uint64_t *)(uintptr_t)*(uint64_t *)params[1];
		uint64_t start = now_ns(), t = start;
		while (t - start < ns) t = now_ns();
		if (stamps) { // as the kernel's blocks: the least start, the most stop
			if (start < stamps[0]) stamps[0] = start;
			if (t > stamps[1]) stamps[1] = t;
		}
	}
	pthread_mutex_lock(&mu);
	launch.f = f;
	launch.gx = gx; launch.gy = gy; launch.gz = gz;
	launch.bx = bx; launch.by = by; launch.bz = bz;
	launch.shared = shared;
	launch.stream = s;
	launch.extra_null = extra == 0;
	memset(launch.params, 0, sizeof launch.params);
	for (int i = 0; i < nparams && i < MAXP; i++) launch.params[i] = *(uint64_t *)params[i];
	launch.count++;
	pthread_mutex_unlock(&mu);
	return 0;
}
CUresult cuGetErrorName(CUresult code, const char **s) {
	switch (code) {
	case 2: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
	case 100: *s = "CUDA_ERROR_NO_DEVICE"; return 0;
	case 101: *s = "CUDA_ERROR_INVALID_DEVICE"; return 0;
	case 201: *s = "CUDA_ERROR_INVALID_CONTEXT"; return 0;
	case 218: *s = "CUDA_ERROR_INVALID_PTX"; return 0;
	case 400: *s = "CUDA_ERROR_INVALID_HANDLE"; return 0;
	case 500: *s = "CUDA_ERROR_NOT_FOUND"; return 0;
	case 600: *s = "CUDA_ERROR_NOT_READY"; return 0;
	case 704: *s = "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"; return 0;
	case 800: *s = "CUDA_ERROR_NOT_PERMITTED"; return 0;
	}
	return 1; // CUDA_ERROR_INVALID_VALUE: unknown code
}
