/* Convolutions in one call each, float32, over strided channels-last views: Winograd F(m x m, 3 x 3)
 * (m = 2 or 4) and im2col + GEMM.
 *
 * A call computes the whole convolution with no Python in between, its work in chunks that the
 * calling thread and a pool of worker threads claim (`parallel_for`), so a part costs no GIL hand-off. The GEMMs call numpy's OpenBLAS (single-threaded while
 * the caller holds `split_blas_threads`) through the function pointer the caller passes. Channels are
 * innermost in every loop that touches data, so gcc vectorises them.
 *
 * The epilogue is a list of elementwise operations applied to each output value before it is
 * stored: value = op(value, operand), the operand a scalar, a strided array over (n, oh, ow, f)
 * (a bias is an array of strides (0, 0, 0, 1), a residual one of the output's shape) or the value
 * an earlier operation saved (x * sigmoid(x) reads x after the sigmoid's operations); negation,
 * exp and erf take no operand. The value is stored into y and, unless NULL, also into y2 (a destination
 * pad's interior).
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*sgemm_fn)(int order, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                         int64_t ldc);

enum { ROW_MAJOR = 101, NO_TRANS = 111 };
enum { EPI_ADD = 0, EPI_SUB = 1, EPI_MUL = 2, EPI_MAX = 3, EPI_MIN = 4, EPI_RSUB = 5, EPI_DIV = 6, EPI_RDIV = 7,
       EPI_NEG = 8, EPI_EXP = 9, EPI_ERF = 10 };

void xrelay_erf_in_place(float *v, int64_t n); /* math_kernels.c, compiled in front of this file */
enum { FROM_ARRAY = 0, FROM_SCALAR = 1, FROM_SAVED = 2 };

typedef struct {
    int32_t kind;      /* EPI_* */
    int32_t scalar;    /* FROM_SCALAR: `value` is the operand; FROM_ARRAY: `data` at the strides; FROM_SAVED */
    float value;
    int32_t save;      /* 1: the value after this operation is saved (for a later FROM_SAVED operand) */
    const float *data;
    int64_t strides[4]; /* elements, over (n, oh, ow, f) */
} epilogue_op;

/* val[q] = op(val[q], o) for q < fn, o the scalar or src[q * sf]: one loop per kind and operand form,
 * so that each vectorises (a switch per value kept them scalar). maximumf/minimumf: NaN in, NaN out,
 * both candidates computed and one selected without a branch (a ReLU's `v > 0` on real data is a
 * coin toss a branch predictor misses: 56x56x64 outputs 2.0 -> 1.1 ms, minimum of 150 runs). */
#define EPILOGUE_LOOP(EXPR)                                                                         \
    do {                                                                                            \
        if (op->scalar == FROM_SCALAR) {                                                            \
            const float o = op->value;                                                              \
            for (int64_t q = 0; q < fn; q++) { const float v = val[q]; val[q] = (EXPR); }           \
        } else if (sf == 1) {                                                                       \
            for (int64_t q = 0; q < fn; q++) { const float v = val[q], o = src[q]; val[q] = (EXPR); } \
        } else {                                                                                    \
            for (int64_t q = 0; q < fn; q++) { const float v = val[q], o = src[q * sf]; val[q] = (EXPR); } \
        }                                                                                           \
    } while (0)

/* e^x for float32, vectorisable (gcc does not vectorise expf without -ffast-math): x = n ln2 + r,
 * |r| <= ln2 / 2, e^r by Cephes' degree-6 polynomial (about 1 ulp), times 2^n made from its bits in two
 * halves (so that results below FLT_MIN come out subnormal and above FLT_MAX infinite). NaN in, NaN out. */
static inline float exp_vec(float x) {
    const float c = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
    const float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  /* round to nearest */
    const float r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t k = (int32_t)n, k1 = k / 2, k2 = k - k1;
    const int32_t b1 = (k1 + 127) << 23, b2 = (k2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    const float y = p * s1 * s2;
    return x != x ? x : y;
}

#ifdef __AVX512F__
#include <immintrin.h>
/* exp_vec on 16 values: the same reduction and polynomial, 2^n applied by one vscalefps (which also
 * rounds results below FLT_MIN to subnormals and above FLT_MAX to infinity). */
static inline __m512 exp16(__m512 x) {
    const __m512 c = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(89.0f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(c, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f),
                                      _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), c));
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
    return _mm512_mask_mov_ps(_mm512_scalef_ps(p, n), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

static void exp_in_place(float *val, int64_t fn) {
    for (int64_t q = 0; q < fn; q += 16) {
        const __mmask16 m = fn - q >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (fn - q)) - 1);
        _mm512_mask_storeu_ps(val + q, m, exp16(_mm512_maskz_loadu_ps(m, val + q)));
    }
}
#else
static void exp_in_place(float *val, int64_t fn) {
    for (int64_t q = 0; q < fn; q++) val[q] = exp_vec(val[q]);
}
#endif

/* The binary kinds, each `case` running LOOP(EXPR) over v (the value) and o (the operand): one table
 * for `apply` and `apply_broadcast`. */
#define BINARY_CASES(LOOP)                                                                          \
    case EPI_ADD: LOOP(v + o); break;                                                               \
    case EPI_SUB: LOOP(v - o); break;                                                               \
    case EPI_MUL: LOOP(v * o); break;                                                               \
    case EPI_MAX: LOOP((v != v) | (o != o) ? v + o : (v > o ? v : o)); break;                        \
    case EPI_MIN: LOOP((v != v) | (o != o) ? v + o : (v < o ? v : o)); break;                        \
    case EPI_DIV: LOOP(v / o); break;                                                               \
    case EPI_RDIV: LOOP(o / v); break;                                                              \
    case EPI_RSUB: LOOP(o - v); break;

static inline void apply(const epilogue_op *op, float *val, int64_t fn, const float *src, int64_t sf) {
    switch (op->kind) {
    BINARY_CASES(EPILOGUE_LOOP)
    case EPI_NEG: for (int64_t q = 0; q < fn; q++) val[q] = -val[q]; break;
    case EPI_EXP: exp_in_place(val, fn); break;
    case EPI_ERF: xrelay_erf_in_place(val, fn); break;
    default: EPILOGUE_LOOP(o - v);
    }
}

/* ---- Threads. A kernel's work is a number of chunks; `parallel_for` posts them, the calling thread
 * and the pool's workers claim them one at a time (an atomic ticket: the job's generation and the
 * next chunk), and the caller returns when every claimed chunk is done. A worker that wakes late,
 * when another thread of the machine holds its core, finds nothing left to claim: the caller never
 * waits for a thread that has not started, where a fork-join (OpenMP's) waits for every thread of
 * the team (measured 3x slower than numpy on ResNet-18 with a loaded machine). Workers spin about a
 * millisecond after a job before they sleep, so that the next kernel, after the Python between the
 * two, finds them awake (waking a sleeping one cost more than a small kernel's half); each round of
 * the spin yields the core to any other thread that wants it. */

typedef void (*chunk_fn)(void *ctx, int64_t chunk);

/* A spinning thread's hint to the core (x86's pause, Arm's yield). */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int workers;
    _Atomic uint64_t posted;  /* generation of the last job */
    _Atomic uint64_t ticket;  /* generation << 32 | next chunk */
    _Atomic int64_t done;
    chunk_fn fn;
    void *ctx;
    int64_t chunks;
    _Atomic int busy;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

enum { SPINS = 2000 };  /* rounds of 16 pauses and a yield: about 1 ms */

static int64_t claim(uint64_t generation, int64_t chunks) {
    uint64_t ticket = atomic_load(&pool.ticket);
    for (;;) {
        if ((ticket >> 32) != (generation & 0xffffffffu) || (int64_t)(ticket & 0xffffffffu) >= chunks) return -1;
        if (atomic_compare_exchange_weak(&pool.ticket, &ticket, ticket + 1)) return (int64_t)(ticket & 0xffffffffu);
    }
}

static void work(uint64_t generation, chunk_fn fn, void *ctx, int64_t chunks) {
    int64_t chunk;
    while ((chunk = claim(generation, chunks)) >= 0) {
        fn(ctx, chunk);
        atomic_fetch_add(&pool.done, 1);
    }
}

static void *serve(void *unused) {
    (void)unused;
    uint64_t seen = atomic_load(&pool.posted);
    for (;;) {
        for (int spin = 0; spin < SPINS && atomic_load(&pool.posted) == seen; spin++) {
            for (int i = 0; i < 16; i++) cpu_relax();
            sched_yield();
        }
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.posted) == seen) pthread_cond_wait(&pool.wake, &pool.lock);
        seen = atomic_load(&pool.posted);
        chunk_fn fn = pool.fn;
        void *ctx = pool.ctx;
        int64_t chunks = pool.chunks;
        pthread_mutex_unlock(&pool.lock);
        work(seen, fn, ctx, chunks);
    }
    return NULL;
}

/* fn(ctx, i) for every i in [0, chunks), on this thread and up to threads - 1 workers. */
static void parallel_for(int threads, int64_t chunks, chunk_fn fn, void *ctx) {
    int expected = 0;
    if (threads <= 1 || chunks <= 1 || !atomic_compare_exchange_strong(&pool.busy, &expected, 1)) {
        for (int64_t i = 0; i < chunks; i++) fn(ctx, i);  /* alone, or another caller has the pool */
        return;
    }
    pthread_mutex_lock(&pool.lock);
    while (pool.workers < threads - 1) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, serve, NULL) != 0) break;
        pthread_detach(thread);
        pool.workers++;
    }
    uint64_t generation = atomic_load(&pool.posted) + 1;
    pool.fn = fn;
    pool.ctx = ctx;
    pool.chunks = chunks;
    atomic_store(&pool.done, 0);
    atomic_store(&pool.ticket, (generation & 0xffffffffu) << 32);
    atomic_store(&pool.posted, generation);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    work(generation, fn, ctx, chunks);
    while (atomic_load(&pool.done) < chunks) cpu_relax();  /* chunks a worker is finishing */
    atomic_store(&pool.busy, 0);
}

enum { SAVED = 256 };

/* The epilogue on val[0:fn], the values of pixel (img, yy, xx), channels [f0, f0 + fn) (or, when
 * every operand is a scalar or saved, any fn values), SAVED values at a time (a saved value's room). */
static inline void epilogue(float *val, int64_t fn, int64_t img, int64_t yy, int64_t xx, int64_t f0,
                            const epilogue_op *ops, int n_ops) {
    float saved[SAVED];
    for (int64_t c0 = 0; c0 < fn && n_ops; c0 += SAVED) {
        const int64_t cn = fn - c0 < SAVED ? fn - c0 : SAVED;
        for (int e = 0; e < n_ops; e++) {
            const epilogue_op *op = &ops[e];
            const float *src = op->scalar == FROM_SAVED ? saved
                               : op->scalar == FROM_SCALAR ? NULL
                               : op->data + img * op->strides[0] + yy * op->strides[1] + xx * op->strides[2]
                                     + (f0 + c0) * op->strides[3];
            apply(op, val + c0, cn, src, op->scalar == FROM_SAVED ? 1 : op->strides[3]);
            if (op->save) memcpy(saved, val + c0, (size_t)cn * sizeof(float));
        }
    }
}

/* val[0:fn] stored at pixel (img, yy, xx), channels [f0, f0 + fn), of the (n, oh, ow, f) view y. */
static inline void put(const float *val, int64_t fn, int64_t img, int64_t yy, int64_t xx, int64_t f0, float *y,
                       const int64_t *ys) {
    float *dst = y + img * ys[0] + yy * ys[1] + xx * ys[2] + f0 * ys[3];
    if (ys[3] == 1)
        memcpy(dst, val, (size_t)fn * sizeof(float));
    else
        for (int64_t q = 0; q < fn; q++) dst[q * ys[3]] = val[q];
}

/* Output values val[0:fn] of pixel (img, yy, xx), channels [f0, f0 + fn): plus `acc` unless NULL, then
 * the epilogue, stored into y and, unless NULL, y2 (all (n, oh, ow, f) views, strides in elements). */
static inline void store(float *val, int64_t fn, int64_t img, int64_t yy, int64_t xx, int64_t f0,
                         const float *acc, const int64_t *accs, float *y, const int64_t *ys, float *y2,
                         const int64_t *ys2, const epilogue_op *ops, int n_ops) {
    if (acc) {
        const float *from = acc + img * accs[0] + yy * accs[1] + xx * accs[2] + f0 * accs[3];
        for (int64_t q = 0; q < fn; q++) val[q] += from[q * accs[3]];
    }
    epilogue(val, fn, img, yy, xx, f0, ops, n_ops);
    put(val, fn, img, yy, xx, f0, y, ys);
    if (y2) put(val, fn, img, yy, xx, f0, y2, ys2);
}

/* A buffer of at least `bytes` kept by the calling thread between calls (OpenMP's threads persist):
 * large allocations are mmap'ed, and faulting in fresh pages on every call would cost more than the
 * transforms. NULL when out of memory. */
static float *scratch(size_t bytes) {
    static __thread float *buffer;
    static __thread size_t capacity;
    if (bytes > capacity) {
        free(buffer);
        buffer = malloc(bytes);
        capacity = buffer ? bytes : 0;
    }
    return buffer;
}

/* An output pixel's (image, row, column), stepped to the next pixel without a division: three per
 * pixel cost as much as storing a short vector. */
typedef struct {
    int64_t img, y, x, oh, ow;
} pixel_cursor;

static inline pixel_cursor cursor_at(int64_t p, int64_t oh, int64_t ow) {
    pixel_cursor at = {p / (oh * ow), p / ow % oh, p % ow, oh, ow};
    return at;
}

static inline void cursor_next(pixel_cursor *at) {
    if (++at->x == at->ow) {
        at->x = 0;
        if (++at->y == at->oh) at->y = 0, at->img++;
    }
}

/* val[p * fn + q] = op(val[p * fn + q], src[q * sf]) for pn pixels of fn values: an array operand the
 * same at every pixel (a bias), one dispatch for them all. */
#define BROADCAST_LOOP(EXPR)                                                                        \
    for (int64_t p = 0; p < pn; p++)                                                                \
        for (int64_t q = 0; q < fn; q++) { float *w = val + p * fn + q; const float v = *w, o = src[q * sf]; *w = (EXPR); }

static void apply_broadcast(const epilogue_op *op, float *val, int64_t pn, int64_t fn, const float *src, int64_t sf) {
    switch (op->kind) {
    BINARY_CASES(BROADCAST_LOOP)
    default: for (int64_t p = 0; p < pn; p++) apply(op, val + p * fn, fn, src, sf);  /* (no operand) */
    }
}

enum { BLOCK_VALUES = 256 };

/* The epilogue on the values of `pixels` consecutive output pixels from `at`, channels [f0, f0 + fn),
 * pixel p's at val[p * ld]: BLOCK_VALUES values at a time, so that an operation of no array operand
 * (a scalar's, a saved value's, exp's) or of one the same at every pixel (a bias) is one loop over
 * all their values when they are dense (ld == fn): per pixel, a SiLU's six operations on 32
 * channels, or a bias and a clip on 96, cost more in dispatch than in arithmetic. */
static void epilogue_pixels(float *val, int64_t ld, int64_t fn, int64_t pixels, pixel_cursor at, int64_t f0,
                            const epilogue_op *ops, int n_ops) {
    if (!n_ops) return;
    if (fn > BLOCK_VALUES) {  /* (a saved value's room holds part of one pixel: pixel by pixel) */
        for (int64_t p = 0; p < pixels; p++, cursor_next(&at)) epilogue(val + p * ld, fn, at.img, at.y, at.x, f0, ops, n_ops);
        return;
    }
    float saved[BLOCK_VALUES];
    const int64_t group = BLOCK_VALUES / fn;
    for (int64_t p0 = 0; p0 < pixels; p0 += group) {
        const int64_t pn = pixels - p0 < group ? pixels - p0 : group;
        float *v = val + p0 * ld;
        for (int e = 0; e < n_ops; e++) {
            const epilogue_op *op = &ops[e];
            const int dense = ld == fn;
            if (op->scalar != FROM_ARRAY && dense) {
                apply(op, v, pn * fn, saved, 1);
            } else if (op->scalar == FROM_ARRAY && dense && !op->strides[0] && !op->strides[1] && !op->strides[2]) {
                apply_broadcast(op, v, pn, fn, op->data + f0 * op->strides[3], op->strides[3]);
            } else {
                pixel_cursor here = at;
                for (int64_t p = 0; p < pn; p++, cursor_next(&here)) {
                    const float *src = op->scalar == FROM_SAVED ? saved + p * fn
                                       : op->scalar == FROM_SCALAR ? NULL
                                       : op->data + here.img * op->strides[0] + here.y * op->strides[1]
                                             + here.x * op->strides[2] + f0 * op->strides[3];
                    apply(op, v + p * ld, fn, src, op->scalar == FROM_ARRAY ? op->strides[3] : 1);
                }
            }
            if (op->save)
                for (int64_t p = 0; p < pn; p++) memcpy(saved + p * fn, v + p * ld, (size_t)fn * sizeof(float));
        }
        for (int64_t p = 0; p < pn; p++) cursor_next(&at);
    }
}

/* One output row's values row[ox * fn + q] (pixel (img, oy, ox), channel f0 + q): plus `acc` unless
 * NULL, then the epilogue, stored into y and, unless NULL, y2. */
static void store_row(float *row, int64_t fn, int64_t oh, int64_t ow, int64_t img, int64_t oy, int64_t f0, const float *acc,
                      const int64_t *accs, float *y, const int64_t *ys, float *y2, const int64_t *ys2,
                      const epilogue_op *ops, int n_ops) {
    if (acc)
        for (int64_t ox = 0; ox < ow; ox++) {
            const float *from = acc + img * accs[0] + oy * accs[1] + ox * accs[2] + f0 * accs[3];
            for (int64_t q = 0; q < fn; q++) row[ox * fn + q] += from[q * accs[3]];
        }
    pixel_cursor at = {img, oy, 0, oh, ow};
    epilogue_pixels(row, fn, fn, ow, at, f0, ops, n_ops);
    for (float *out = y; out; out = out == y ? y2 : NULL) {
        const int64_t *os = out == y ? ys : ys2;
        if (os[3] == 1 && os[2] == fn)  /* the row's pixels dense in the output: one copy */
            memcpy(out + img * os[0] + oy * os[1] + f0, row, (size_t)(ow * fn) * sizeof(float));
        else
            for (int64_t ox = 0; ox < ow; ox++) put(row + ox * fn, fn, img, oy, ox, f0, out, os);
    }
}

/* ---- Winograd: blocks of tile rows, each thread its own blocks (the input transform B^T d B of
 * each tile, one sgemm per point, the output transform A^T M A through the epilogue). */

/* Input transform of one row of a tile for F(2,3) (a = 4): B^T applied along the row. */
#define BT2(d0, d1, d2, d3, o0, o1, o2, o3) \
    do { o0 = d0 - d2; o1 = d1 + d2; o2 = d2 - d1; o3 = d1 - d3; } while (0)
#define BT4(d0, d1, d2, d3, d4, d5, o0, o1, o2, o3, o4, o5) \
    do { o0 = 4 * d0 - 5 * d2 + d4; o1 = -4 * d1 - 4 * d2 + d3 + d4; o2 = 4 * d1 - 4 * d2 - d3 + d4; \
         o3 = -2 * d1 - d2 + 2 * d3 + d4; o4 = 2 * d1 - d2 - 2 * d3 + d4; o5 = 4 * d1 - 5 * d3 + d5; } while (0)

/* Tile t of a block whose first tile row is row0: its image, tile row and tile column. */
static inline void tile_position(int64_t t, int64_t row0, int64_t th, int64_t tw, int64_t *img, int64_t *ty,
                                 int64_t *tx) {
    int64_t row = row0 + t / tw;
    *img = row / th;
    *ty = row % th;
    *tx = t % tw;
}

/* V[p][t][c] for the tiles [t0, t1) of a block whose first tile row is `row0` (in tile rows over n*th). */
static void input_transform(const float *x, const int64_t *xs, int64_t h, int64_t w, int64_t c, int64_t th,
                            int64_t tw, int m, int64_t row0, int64_t t0, int64_t t1, int64_t tiles, float *v) {
    const int a = m + 2;
    float d[6][6][64], r[6][6][64];
    for (int64_t t = t0; t < t1; t++) {
        int64_t img, ty, tx;
        tile_position(t, row0, th, tw, &img, &ty, &tx);
        for (int64_t c0 = 0; c0 < c; c0 += 64) {
            int64_t cn = c - c0 < 64 ? c - c0 : 64;
            for (int i = 0; i < a; i++) {
                int64_t y = ty * m + i;
                for (int j = 0; j < a; j++) {
                    int64_t xx = tx * m + j;
                    if (y < h && xx < w) {
                        const float *src = x + img * xs[0] + y * xs[1] + xx * xs[2] + c0 * xs[3];
                        if (xs[3] == 1)
                            for (int64_t k = 0; k < cn; k++) d[i][j][k] = src[k];
                        else
                            for (int64_t k = 0; k < cn; k++) d[i][j][k] = src[k * xs[3]];
                    } else {
                        for (int64_t k = 0; k < cn; k++) d[i][j][k] = 0.0f;
                    }
                }
            }
            /* rows: r[i][j] = sum_k B^T[i][k] d[k][j] */
            for (int j = 0; j < a; j++)
                for (int64_t k = 0; k < cn; k++) {
                    if (m == 2)
                        BT2(d[0][j][k], d[1][j][k], d[2][j][k], d[3][j][k], r[0][j][k], r[1][j][k], r[2][j][k],
                            r[3][j][k]);
                    else
                        BT4(d[0][j][k], d[1][j][k], d[2][j][k], d[3][j][k], d[4][j][k], d[5][j][k], r[0][j][k],
                            r[1][j][k], r[2][j][k], r[3][j][k], r[4][j][k], r[5][j][k]);
                }
            /* columns: V[i][j] = sum_k r[i][k] B[k][j] */
            for (int i = 0; i < a; i++) {
                float *o[6];
                for (int j = 0; j < a; j++) o[j] = v + ((int64_t)(i * a + j) * tiles + t) * c + c0;
                for (int64_t k = 0; k < cn; k++) {
                    if (m == 2)
                        BT2(r[i][0][k], r[i][1][k], r[i][2][k], r[i][3][k], o[0][k], o[1][k], o[2][k], o[3][k]);
                    else
                        BT4(r[i][0][k], r[i][1][k], r[i][2][k], r[i][3][k], r[i][4][k], r[i][5][k], o[0][k], o[1][k],
                            o[2][k], o[3][k], o[4][k], o[5][k]);
                }
            }
        }
    }
}

#define AT2(s0, s1, s2, s3, o0, o1) do { o0 = s0 + s1 + s2; o1 = s1 - s2 - s3; } while (0)
#define AT4(s0, s1, s2, s3, s4, s5, o0, o1, o2, o3) \
    do { o0 = s0 + s1 + s2 + s3 + s4; o1 = s1 - s2 + 2 * s3 - 2 * s4; o2 = s1 + s2 + 4 * s3 + 4 * s4; \
         o3 = s1 - s2 + 8 * s3 - 8 * s4 + s5; } while (0)

/* Output transform of tiles [t0, t1) from M[p][t][f], written to y through the epilogue. */
static void output_transform(const float *mm, int64_t tiles, int64_t f, int64_t fa, int64_t fb, int m, int64_t th,
                             int64_t tw, int64_t oh, int64_t ow, int64_t row0, int64_t t0, int64_t t1,
                             const float *acc, const int64_t *accs, float *y, const int64_t *ys, float *y2,
                             const int64_t *ys2, const epilogue_op *ops, int n_ops) {
    const int a = m + 2;
    float r[4][6][64], o[4][4][64];
    for (int64_t t = t0; t < t1; t++) {
        int64_t img, ty, tx;
        tile_position(t, row0, th, tw, &img, &ty, &tx);
        for (int64_t f0 = fa; f0 < fb; f0 += 64) {
            int64_t fn = fb - f0 < 64 ? fb - f0 : 64;
            /* rows: r[i][j] = sum_k A^T[i][k] M[k][j] */
            for (int j = 0; j < a; j++) {
                const float *s[6];
                for (int k = 0; k < a; k++) s[k] = mm + ((int64_t)(k * a + j) * tiles + t) * f + f0;
                for (int64_t q = 0; q < fn; q++) {
                    if (m == 2)
                        AT2(s[0][q], s[1][q], s[2][q], s[3][q], r[0][j][q], r[1][j][q]);
                    else
                        AT4(s[0][q], s[1][q], s[2][q], s[3][q], s[4][q], s[5][q], r[0][j][q], r[1][j][q],
                            r[2][j][q], r[3][j][q]);
                }
            }
            for (int i = 0; i < m; i++)
                for (int64_t q = 0; q < fn; q++) {
                    if (m == 2)
                        AT2(r[i][0][q], r[i][1][q], r[i][2][q], r[i][3][q], o[i][0][q], o[i][1][q]);
                    else
                        AT4(r[i][0][q], r[i][1][q], r[i][2][q], r[i][3][q], r[i][4][q], r[i][5][q], o[i][0][q],
                            o[i][1][q], o[i][2][q], o[i][3][q]);
                }
            for (int i = 0; i < m; i++) {
                int64_t yy = ty * m + i;
                if (yy >= oh) break;
                for (int j = 0; j < m; j++) {
                    int64_t xx = tx * m + j;
                    if (xx >= ow) break;
                    store(o[i][j], fn, img, yy, xx, f0, acc, accs, y, ys, y2, ys2, ops, n_ops);
                }
            }
        }
    }
}

struct winograd_job {
    const float *x; const int64_t *xs; int64_t h, w, c; const float *u; int64_t f;
    const float *acc; const int64_t *accs; float *y; const int64_t *ys; float *y2; const int64_t *ys2;
    int64_t oh, ow; int m; int64_t th, tw, rows, block; sgemm_fn sgemm; const epilogue_op *ops; int n_ops;
    int failed;
    float *v, *mm;  /* by filters: every tile's transform and products, shared */
};

/* By filters, first: the input transform of tiles [b * block, (b + 1) * block) into the shared v. */
static void winograd_gather(void *context, int64_t b) {
    struct winograd_job *j = context;
    int64_t tiles = j->rows * j->tw, t0 = b * j->block, t1 = t0 + j->block < tiles ? t0 + j->block : tiles;
    if (t0 < t1) input_transform(j->x, j->xs, j->h, j->w, j->c, j->th, j->tw, j->m, 0, t0, t1, tiles, j->v);
}

/* By filters, then: filters [s * block, (s + 1) * block) of every tile: one sgemm per point, the
 * output transform of those filters. */
static void winograd_filters(void *context, int64_t share) {
    struct winograd_job *j = context;
    const int points = (j->m + 2) * (j->m + 2);
    int64_t tiles = j->rows * j->tw, f0 = share * j->block, f1 = f0 + j->block < j->f ? f0 + j->block : j->f;
    if (f0 >= f1) return;
    for (int p = 0; p < points; p++)
        j->sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, tiles, f1 - f0, j->c, 1.0f, j->v + (int64_t)p * tiles * j->c, j->c,
                 j->u + (int64_t)p * j->c * j->f + f0, j->f, 0.0f, j->mm + (int64_t)p * tiles * j->f + f0, j->f);
    output_transform(j->mm, tiles, j->f, f0, f1, j->m, j->th, j->tw, j->oh, j->ow, 0, 0, tiles, j->acc, j->accs,
                     j->y, j->ys, j->y2, j->ys2, j->ops, j->n_ops);
}

/* Block b of tile rows: its input transform, one sgemm per point, its output transform. */
static void winograd_block(void *context, int64_t b) {
    struct winograd_job *j = context;
    const int points = (j->m + 2) * (j->m + 2);
    int64_t row0 = b * j->block, nrows = j->rows - row0 < j->block ? j->rows - row0 : j->block;
    if (nrows <= 0) return;
    int64_t tiles = nrows * j->tw;
    float *v = scratch((size_t)(j->block * j->tw) * points * (j->c + j->f) * sizeof(float));
    if (!v) { j->failed = 1; return; }
    float *mm = v + (size_t)(j->block * j->tw) * points * j->c;
    input_transform(j->x, j->xs, j->h, j->w, j->c, j->th, j->tw, j->m, row0, 0, tiles, tiles, v);
    for (int p = 0; p < points; p++)
        j->sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, tiles, j->f, j->c, 1.0f, v + (int64_t)p * tiles * j->c, j->c,
                 j->u + (int64_t)p * j->c * j->f, j->f, 0.0f, mm + (int64_t)p * tiles * j->f, j->f);
    output_transform(mm, tiles, j->f, 0, j->f, j->m, j->th, j->tw, j->oh, j->ow, row0, 0, tiles, j->acc, j->accs, j->y,
                     j->ys, j->y2, j->ys2, j->ops, j->n_ops);
}

/* The convolution of x (an (n, h, w, c) view, strides xs in elements, read from (0, 0); positions
 * past h or w read as 0) with u = G g G^T as (a*a, c, f) contiguous, plus `acc` unless NULL, through
 * the epilogue into y and, unless NULL, also y2 (all (n, oh, ow, f) views, strides in elements). The n*th tile rows are cut into blocks whose transformed tiles and products take about
 * `block_bytes` at most, unless u is the bigger operand (a multiple of `threads` blocks, so the threads' shares are even); each
 * thread computes whole blocks in its own buffers: one fork and join per call, no barrier inside.
 * Returns 0, or -1 when out of memory. */
int xrelay_winograd(const float *x, const int64_t *xs, int64_t n, int64_t h, int64_t w, int64_t c,
                    const float *u, int64_t f, const float *acc, const int64_t *accs, float *y, const int64_t *ys,
                    float *y2, const int64_t *ys2, int64_t oh, int64_t ow, int m, int threads,
                    int64_t block_bytes, int by_filters, sgemm_fn sgemm, const epilogue_op *ops, int n_ops) {
    const int a = m + 2, points = a * a;
    const int64_t th = (oh + m - 1) / m, tw = (ow + m - 1) / m, rows = n * th;
    if (by_filters && threads > 1) {  /* u outweighs the tiles: each thread reads only its filters' share */
        const int64_t tiles = rows * tw, share = ((f + threads - 1) / threads + 15) / 16 * 16;
        struct winograd_job job = {x, xs, h, w, c, u, f, acc, accs, y, ys, y2, ys2, oh, ow, m, th, tw, rows,
                                   (tiles + threads - 1) / threads, sgemm, ops, n_ops, 0, NULL, NULL};
        job.v = scratch((size_t)(points * tiles * (c + f)) * sizeof(float));  /* the caller's: kept warm */
        if (!job.v) return -1;
        job.mm = job.v + (int64_t)points * tiles * c;
        parallel_for(threads, threads, winograd_gather, &job);
        job.block = share;
        parallel_for(threads, (f + share - 1) / share, winograd_filters, &job);
        return 0;
    }
    const int64_t per_row = (int64_t)points * tw * (c + f) * (int64_t)sizeof(float);
    int64_t blocks = (rows * per_row + block_bytes - 1) / block_bytes;
    if (rows * per_row < 4 * (int64_t)points * c * f * (int64_t)sizeof(float))
        blocks = 1; /* every block reads all of u again: cutting pays only when the tiles outweigh it */
    if (blocks > 1 || rows >= threads)
        blocks = (blocks + threads - 1) / threads * threads;
    if (blocks > rows) blocks = rows;
    if (blocks < 1) blocks = 1;
    struct winograd_job job = {x, xs, h, w, c, u, f, acc, accs, y, ys, y2, ys2, oh, ow, m, th, tw, rows,
                               (rows + blocks - 1) / blocks, sgemm, ops, n_ops, 0, NULL, NULL};
    parallel_for(threads, blocks, winograd_block, &job);
    return job.failed ? -1 : 0;
}

/* ---- im2col + GEMM. Output pixels are cut into blocks whose patch matrix and product take about
 * `block_bytes` (a multiple of `threads` blocks): each thread copies its blocks' patches (kh, kw, c
 * order, a whole kernel row at once where the data's W and C are contiguous), multiplies them by the
 * (K, F) weight matrix and stores the product through the epilogue. With few pixels and many filters
 * (`by_filters`), the patches are copied once and each thread multiplies them by its share of the
 * filters, reading only its share of the weights. A grouped convolution (`groups` > 1: channels and
 * filters each cut into that many consecutive groups) copies each group's patches in turn and
 * multiplies them by that group's (K, F / groups) weight matrix into the group's filters. */

/* Patches of output pixels [p0, p1) into cols (rows of k = kh*kw*c floats). */
static void gather_patches(const float *x, const int64_t *xs, int64_t c, int64_t kh, int64_t kw,
                           int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t oh, int64_t ow,
                           int64_t p0, int64_t p1, float *cols) {
    const int64_t k = kh * kw * c;
    const int rows_contiguous = dw == 1 && xs[3] == 1 && xs[2] == c;
    pixel_cursor at = cursor_at(p0, oh, ow);
    for (int64_t p = p0; p < p1; p++, cursor_next(&at)) {
        int64_t img = at.img, oy = at.y, ox = at.x;
        float *row = cols + (p - p0) * k;
        for (int64_t i = 0; i < kh; i++) {
            const float *src = x + img * xs[0] + (oy * sh + i * dh) * xs[1] + ox * sw * xs[2];
            if (rows_contiguous) {
                memcpy(row + i * kw * c, src, (size_t)(kw * c) * sizeof(float));
                continue;
            }
            for (int64_t j = 0; j < kw; j++) {
                const float *s = src + j * dw * xs[2];
                float *d = row + (i * kw + j) * c;
                if (xs[3] == 1 && c >= 32)
                    memcpy(d, s, (size_t)c * sizeof(float));
                else if (xs[3] == 1)  /* a few channels (a group's): inline, a call per copy would cost more */
                    for (int64_t q = 0; q < c; q++) d[q] = s[q];
                else
                    for (int64_t q = 0; q < c; q++) d[q] = s[q * xs[3]];
            }
        }
    }
}

/* Product rows of pixels [p0, p1), filters [f0, f1) (row stride ld; the product is the caller's
 * scratch, changed in place): plus `acc` unless NULL, through the epilogue, into y and y2. */
static void store_pixels(float *product, int64_t ld, int64_t oh, int64_t ow, int64_t p0, int64_t p1,
                         int64_t f0, int64_t f1, const float *acc, const int64_t *accs, float *y,
                         const int64_t *ys, float *y2, const int64_t *ys2, const epilogue_op *ops, int n_ops) {
    const int64_t fn = f1 - f0;
    if (acc) {
        pixel_cursor at = cursor_at(p0, oh, ow);
        for (int64_t p = p0; p < p1; p++, cursor_next(&at)) {
            const float *from = acc + at.img * accs[0] + at.y * accs[1] + at.x * accs[2] + f0 * accs[3];
            float *row = product + (p - p0) * ld;
            for (int64_t q = 0; q < fn; q++) row[q] += from[q * accs[3]];
        }
    }
    epilogue_pixels(product, ld, fn, p1 - p0, cursor_at(p0, oh, ow), f0, ops, n_ops);
    for (float *out = y; out; out = out == y ? y2 : NULL) {
        const int64_t *os = out == y ? ys : ys2;
        pixel_cursor at = cursor_at(p0, oh, ow);
        for (int64_t p = p0; p < p1;) {
            /* the pixels left in this output row, when they and the product's rows are dense: one copy */
            const int64_t run = ld == fn && os[3] == 1 && os[2] == fn ? (ow - at.x < p1 - p ? ow - at.x : p1 - p) : 1;
            if (run > 1)
                memcpy(out + at.img * os[0] + at.y * os[1] + at.x * os[2] + f0, product + (p - p0) * ld,
                       (size_t)(run * fn) * sizeof(float));
            else
                put(product + (p - p0) * ld, fn, at.img, at.y, at.x, f0, out, os);
            p += run;
            for (int64_t r = 0; r < run; r++) cursor_next(&at);
        }
    }
}

#ifdef __AVX512F__
enum { PT = 6, FV = 4, KB = 256, STORE_VALUES = 2048 };


/* out[i * ldo + q] (+= unless `first`) sum over k < c of x[i * ldx + k] * w[k * ldw + q], for i < PN,
 * q < fn <= 16 * NV. */
static inline __attribute__((always_inline)) void pointwise_tile(
        const float *x, int64_t ldx, int64_t c, const float *w, int64_t ldw, int64_t fn, float *out, int64_t ldo,
        int first, const int PN, const int NV) {
    __m512 acc[PT][FV];
    const __mmask16 last = fn % 16 ? (__mmask16)((1u << (fn % 16)) - 1) : (__mmask16)0xffff;
    _Pragma("GCC unroll 8") for (int i = 0; i < PN; i++)
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)
            acc[i][v] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(v == NV - 1 ? last : 0xffff, out + i * ldo + 16 * v);
    for (int64_t k = 0; k < c; k++) {
        __m512 wv[FV];
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)
            wv[v] = v == NV - 1 ? _mm512_maskz_loadu_ps(last, w + k * ldw + 16 * v) : _mm512_loadu_ps(w + k * ldw + 16 * v);
        _Pragma("GCC unroll 8") for (int i = 0; i < PN; i++) {
            const __m512 xb = _mm512_set1_ps(x[i * ldx + k]);
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = _mm512_fmadd_ps(xb, wv[v], acc[i][v]);
        }
    }
    _Pragma("GCC unroll 8") for (int i = 0; i < PN; i++)
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {
            if (v == NV - 1)
                _mm512_mask_storeu_ps(out + i * ldo + 16 * v, last, acc[i][v]);
            else
                _mm512_storeu_ps(out + i * ldo + 16 * v, acc[i][v]);
        }
}

#define POINTWISE_NV(PN)                                                                            \
    switch (nv) {                                                                                   \
    case 1: pointwise_tile(x, ldx, c, w, ldw, fn, out, ldo, first, PN, 1); break;                          \
    case 2: pointwise_tile(x, ldx, c, w, ldw, fn, out, ldo, first, PN, 2); break;                          \
    case 3: pointwise_tile(x, ldx, c, w, ldw, fn, out, ldo, first, PN, 3); break;                          \
    default: pointwise_tile(x, ldx, c, w, ldw, fn, out, ldo, first, PN, 4);                                \
    }

/* `pointwise_tile` with its sizes constant (registers, not memory, for the sums). */
static void pointwise_sizes(const float *x, int64_t ldx, int64_t c, const float *w, int64_t ldw, int64_t fn,
                            float *out, int64_t ldo, int first, int64_t pn) {
    const int64_t nv = (fn + 15) / 16;
    switch (pn) {
    case 1: POINTWISE_NV(1); break;
    case 2: POINTWISE_NV(2); break;
    case 3: POINTWISE_NV(3); break;
    case 4: POINTWISE_NV(4); break;
    case 5: POINTWISE_NV(5); break;
    default: POINTWISE_NV(PT);
    }
}
#endif

struct im2col_job {
    const float *x; const int64_t *xs; int64_t c; const float *wmat; int64_t f, kh, kw, sh, sw, dh, dw;
    const float *acc; const int64_t *accs; float *y; const int64_t *ys; float *y2; const int64_t *ys2;
    int64_t oh, ow, pixels, block, groups; sgemm_fn sgemm; const epilogue_op *ops; int n_ops;
    float *cols, *product;  /* by filters: all pixels' patches and products, shared */
    int failed;
};

/* Block b of output pixels: per group, its patches and their product with the group's weight
 * matrix; then all filters stored. */
static void im2col_block(void *context, int64_t b) {
    struct im2col_job *j = context;
    const int64_t k = j->kh * j->kw * j->c, fg = j->f / j->groups;
    int64_t p0 = b * j->block, p1 = p0 + j->block < j->pixels ? p0 + j->block : j->pixels;
    if (p0 >= p1) return;
    float *cols = scratch((size_t)(j->block * (k + j->f)) * sizeof(float));
    if (!cols) { j->failed = 1; return; }
    float *product = cols + j->block * k;
    /* A 1x1 window at stride 1 over dense channels-last images: the patches are the data's own rows. */
    const int64_t channels = j->c * j->groups;
    const int dense = j->kh == 1 && j->kw == 1 && j->sh == 1 && j->sw == 1 && j->xs[3] == 1 && j->xs[2] == channels
                      && j->xs[1] == j->ow * channels && j->xs[0] == j->oh * j->ow * channels;
    /* One GEMM per block and group: a GEMM per image row would pack the weight matrix again for each row.
     * Pixels evenly strided in y (dense images, filters innermost): the product goes straight into y
     * and the epilogue runs over it there (a copy of the output through a scratch product costs as
     * much as a small GEMM). */
    const int dense_out = !j->acc && j->ys[3] == 1 && j->ys[1] == j->ow * j->ys[2] && j->ys[0] == j->oh * j->ys[1];
    float *dst = dense_out ? j->y + p0 * j->ys[2] : product;
    const int64_t ldc = dense_out ? j->ys[2] : j->f;
    for (int64_t g = 0; g < j->groups; g++) {
        const float *patches = dense ? j->x + p0 * channels + g * j->c : cols;
        if (!dense)
            gather_patches(j->x + g * j->c * j->xs[3], j->xs, j->c, j->kh, j->kw, j->sh, j->sw, j->dh, j->dw,
                           j->oh, j->ow, p0, p1, cols);
#ifdef __AVX512F__
        if (k <= KB) {  /* the reduction one panel: register tiles, as `pointwise` has them */
            const int64_t ldp = dense ? channels : k;
            for (int64_t q = 0; q < fg; q += 16 * FV)
                for (int64_t p = p0; p < p1; p += PT)
                    pointwise_sizes(patches + (p - p0) * ldp, ldp, k, j->wmat + g * k * fg + q, fg,
                                    fg - q < 16 * FV ? fg - q : 16 * FV, dst + g * fg + (p - p0) * ldc + q, ldc, 1,
                                    p1 - p < PT ? p1 - p : PT);
            continue;
        }
#endif
        j->sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, p1 - p0, fg, k, 1.0f, patches, dense ? channels : k,
                 j->wmat + g * k * fg, fg, 0.0f, dst + g * fg, ldc);
    }
    if (!dense_out) {
        store_pixels(product, j->f, j->oh, j->ow, p0, p1, 0, j->f, j->acc, j->accs, j->y, j->ys, j->y2, j->ys2,
                     j->ops, j->n_ops);
        return;
    }
    epilogue_pixels(dst, j->ys[2], j->f, p1 - p0, cursor_at(p0, j->oh, j->ow), 0, j->ops, j->n_ops);
    if (j->y2) {
        pixel_cursor at = cursor_at(p0, j->oh, j->ow);
        for (int64_t p = p0; p < p1; p++, cursor_next(&at)) put(dst + (p - p0) * j->ys[2], j->f, at.img, at.y, at.x, 0, j->y2, j->ys2);
    }
}

/* By filters, first: the patches of pixel block b into the shared matrix. */
static void im2col_gather(void *context, int64_t b) {
    struct im2col_job *j = context;
    const int64_t k = j->kh * j->kw * j->c;
    int64_t p0 = b * j->block, p1 = p0 + j->block < j->pixels ? p0 + j->block : j->pixels;
    if (p0 < p1)
        gather_patches(j->x, j->xs, j->c, j->kh, j->kw, j->sh, j->sw, j->dh, j->dw, j->oh, j->ow, p0, p1,
                       j->cols + p0 * k);
}

/* By filters, then: every pixel's product with filters [s * block, (s + 1) * block), stored. */
static void im2col_filters(void *context, int64_t share) {
    struct im2col_job *j = context;
    const int64_t k = j->kh * j->kw * j->c;
    int64_t f0 = share * j->block, f1 = f0 + j->block < j->f ? f0 + j->block : j->f;
    if (f0 >= f1) return;
    j->sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, j->pixels, f1 - f0, k, 1.0f, j->cols, k, j->wmat + f0, j->f, 0.0f,
             j->product + f0, j->f);
    store_pixels(j->product + f0, j->f, j->oh, j->ow, 0, j->pixels, f0, f1, j->acc, j->accs, j->y, j->ys, j->y2,
                 j->ys2, j->ops, j->n_ops);
}

/* ---- Pointwise: a 1x1 stride-1 convolution of pixels evenly strided in x (its channels dense), on
 * AVX-512: sums of PT pixels x up to FV vectors of 16 filters in registers over the channels (KB at a
 * time: a panel of weights stays in cache while every tile of the strip reads it), read straight
 * from x and the (c, f) weight matrix; a unit is a strip of pixels (and, by filters, a share of
 * them), whose values then go through the epilogue and into y and y2 a few pixels at a time, while
 * in L1 (sgemm's product went through it and into a pad's interior from L2: MobileNet v2's
 * expansions with their clip and pad 10-20% slower on one thread). */
#ifdef __AVX512F__
struct pointwise_job {
    const float *x; int64_t ldx, c; const float *w; int64_t f; float *y; const int64_t *ys; float *y2;
    const int64_t *ys2; int64_t oh, ow, pixels, strip, share, shares; const epilogue_op *ops; int n_ops, failed;
};

static void pointwise_unit(void *context, int64_t unit) {
    struct pointwise_job *j = context;
    const int64_t p0 = unit / j->shares * j->strip, f0 = unit % j->shares * j->share;
    const int64_t p1 = p0 + j->strip < j->pixels ? p0 + j->strip : j->pixels, f1 = f0 + j->share < j->f ? f0 + j->share : j->f;
    if (p0 >= p1 || f0 >= f1) return;
    const int64_t fn = f1 - f0;
    float *strip = scratch((size_t)(j->strip * fn) * sizeof(float));
    if (!strip) { j->failed = 1; return; }
    /* A panel of KB channels x 16 * FV filters of the weights stays in L1 while every tile reads it. */
    for (int64_t q = 0; q < fn; q += 16 * FV)
        for (int64_t k0 = 0; k0 < j->c; k0 += KB)
            for (int64_t p = p0; p < p1; p += PT)
                pointwise_sizes(j->x + p * j->ldx + k0, j->ldx, j->c - k0 < KB ? j->c - k0 : KB, j->w + k0 * j->f + f0 + q,
                                j->f, fn - q < 16 * FV ? fn - q : 16 * FV, strip + (p - p0) * fn + q, fn, k0 == 0,
                                p1 - p < PT ? p1 - p : PT);
    /* Through the epilogue and stored STORE_VALUES values at a time, while they are in L1. */
    const int64_t group = fn < STORE_VALUES ? STORE_VALUES / fn : 1;
    for (int64_t p = p0; p < p1; p += group)
        store_pixels(strip + (p - p0) * fn, fn, j->oh, j->ow, p, p + group < p1 ? p + group : p1, f0, f1, NULL, NULL,
                     j->y, j->ys, j->y2, j->ys2, j->ops, j->n_ops);
}

static int pointwise(const float *x, int64_t ldx, int64_t c, const float *w, int64_t f, float *y, const int64_t *ys,
                     float *y2, const int64_t *ys2, int64_t pixels, int64_t oh, int64_t ow, int threads,
                     int64_t block_bytes, int by_filters, const epilogue_op *ops, int n_ops) {
    if (pixels < 1 || f < 1) return 0;
    /* Strips of about `block_bytes` of data and values, as many as a multiple of the threads. */
    int64_t strips = (pixels * (c + f) * (int64_t)sizeof(float) + block_bytes - 1) / block_bytes;
    if (!(by_filters && threads > 1)) strips = (strips + threads - 1) / threads * threads;
    int64_t strip = (pixels + strips - 1) / strips;
    strip = (strip + PT - 1) / PT * PT;
    struct pointwise_job job = {x, ldx, c, w, f, y, ys, y2, ys2, oh, ow, pixels, strip, f, 1, ops, n_ops, 0};
    if (by_filters && threads > 1) {
        job.share = (f + threads * 16 - 1) / (threads * 16) * 16;
        job.shares = (f + job.share - 1) / job.share;
    }
    parallel_for(threads, (pixels + job.strip - 1) / job.strip * job.shares, pointwise_unit, &job);
    return job.failed ? -1 : 0;
}
#endif

/* c: the channels of one group; wmat: (groups, kh*kw*c, f / groups), rows in (kh, kw, c) order. */
int xrelay_im2col(const float *x, const int64_t *xs, int64_t n, int64_t c, int64_t groups, const float *wmat,
                  int64_t f, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                  const float *acc, const int64_t *accs, float *y, const int64_t *ys, float *y2, const int64_t *ys2,
                  int64_t oh, int64_t ow, int threads, int64_t block_bytes, int by_filters, sgemm_fn sgemm,
                  const epilogue_op *ops, int n_ops) {
    const int64_t k = kh * kw * c, pixels = n * oh * ow;
#ifdef __AVX512F__
    if (groups == 1 && kh == 1 && kw == 1 && sh == 1 && sw == 1 && !acc && xs[3] == 1 && xs[1] == ow * xs[2]
        && xs[0] == oh * xs[1])
        return pointwise(x, xs[2], c, wmat, f, y, ys, y2, ys2, pixels, oh, ow, threads, block_bytes, by_filters,
                         ops, n_ops);
#endif
    struct im2col_job job = {x, xs, c, wmat, f, kh, kw, sh, sw, dh, dw, acc, accs, y, ys, y2, ys2, oh, ow,
                             pixels, 0, groups, sgemm, ops, n_ops, NULL, NULL, 0};
    if (by_filters && threads > 1 && groups == 1) {
        job.cols = scratch((size_t)(pixels * (k + f)) * sizeof(float));  /* the caller's: kept warm */
        if (!job.cols) return -1;
        job.product = job.cols + pixels * k;
        job.block = (pixels + threads - 1) / threads;
        parallel_for(threads, threads, im2col_gather, &job);
        job.block = (f + threads - 1) / threads;
        parallel_for(threads, threads, im2col_filters, &job);
        return 0;
    }
    const int64_t per_pixel = (k + f) * (int64_t)sizeof(float);
    int64_t blocks = (pixels * per_pixel + block_bytes - 1) / block_bytes;
    blocks = (blocks + threads - 1) / threads * threads;
    if (blocks > pixels) blocks = pixels;
    if (blocks < 1) blocks = 1;
    job.block = (pixels + blocks - 1) / blocks;
    parallel_for(threads, blocks, im2col_block, &job);
    return job.failed ? -1 : 0;
}

/* ---- Windows: y[n, oh, ow, c] = the reduction (EPI_ADD, EPI_MAX or EPI_MIN) over the window (kh, kw)
 * of x[n, oh * sh + i * dh, ow * sw + k * dw, c], starting from acc's value unless acc is NULL (the
 * window lies inside x: a pool's pad is an op of its own), then the epilogue, stored into y and y2.
 * A 1x1 window is an elementwise chain: y = epilogue(x). Ranges of the n * oh * ow output pixels are
 * the parallel work; each pixel's c values go through a vector of at most CHANNELS. */

enum { CHANNELS = 512 };

struct window_job {
    const float *x;
    const int64_t *xs;
    int64_t pixels, oh, ow, c, kh, kw, sh, sw, dh, dw;
    int kind;
    const float *acc;
    const int64_t *accs;
    float *y;
    const int64_t *ys;
    float *y2;
    const int64_t *ys2;
    const epilogue_op *ops;
    int n_ops;
    int64_t per_chunk;
};

static void window_chunk(void *ctx, int64_t chunk) {
    const struct window_job *j = ctx;
    const epilogue_op combine = {j->kind, FROM_ARRAY, 0.0f, 0, NULL, {0, 0, 0, 0}};
    const int64_t sc = j->xs[3];
    float val[CHANNELS];
    int64_t p0 = chunk * j->per_chunk, p1 = p0 + j->per_chunk < j->pixels ? p0 + j->per_chunk : j->pixels;
    pixel_cursor at = cursor_at(p0, j->oh, j->ow);
    for (int64_t p = p0; p < p1; p++, cursor_next(&at)) {
        int64_t img = at.img, yy = at.y, xx = at.x;
        for (int64_t c0 = 0; c0 < j->c; c0 += CHANNELS) {
            int64_t cn = j->c - c0 < CHANNELS ? j->c - c0 : CHANNELS;
            int first = 1;
            if (j->acc) {
                const float *from = j->acc + img * j->accs[0] + yy * j->accs[1] + xx * j->accs[2] + c0 * j->accs[3];
                for (int64_t q = 0; q < cn; q++) val[q] = from[q * j->accs[3]];
                first = 0;
            }
            for (int64_t i = 0; i < j->kh; i++) {
                const float *line = j->x + img * j->xs[0] + (yy * j->sh + i * j->dh) * j->xs[1]
                                    + xx * j->sw * j->xs[2] + c0 * sc;
                for (int64_t k = 0; k < j->kw; k++) {
                    const float *src = line + k * j->dw * j->xs[2];
                    if (first) {
                        if (sc == 1)
                            memcpy(val, src, (size_t)cn * sizeof(float));
                        else
                            for (int64_t q = 0; q < cn; q++) val[q] = src[q * sc];
                        first = 0;
                    } else {
                        apply(&combine, val, cn, src, sc);
                    }
                }
            }
            store(val, cn, img, yy, xx, c0, NULL, NULL, j->y, j->ys, j->y2, j->ys2, j->ops, j->n_ops);
        }
    }
}

int xrelay_window(const float *x, const int64_t *xs, int64_t n, int64_t oh, int64_t ow, int64_t c, int64_t kh,
                  int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int kind, const float *acc,
                  const int64_t *accs, float *y, const int64_t *ys, float *y2, const int64_t *ys2,
                  const epilogue_op *ops, int n_ops, int threads) {
    int64_t pixels = n * oh * ow;
    int64_t chunks = threads > 1 ? 8 * (int64_t)threads : 1;
    if (chunks > pixels) chunks = pixels;
    if (chunks < 1) return 0;
    struct window_job job = {x, xs, pixels, oh, ow, c, kh, kw, sh, sw, dh, dw, kind, acc, accs, y, ys, y2, ys2,
                             ops, n_ops, (pixels + chunks - 1) / chunks};
    parallel_for(threads, chunks, window_chunk, &job);
    return 0;
}

/* ---- Depthwise: y[n, oh, ow, c] = sum over the window (kh, kw) of x[n, oh * sh + i * dh, ow * sw + j * dw, c]
 * * w[i, j, c] (w dense (kh, kw, c); the window inside x), then the epilogue. The parallel work is
 * units of one output row and one slice of at most ROW_VALUES / ow channels: each LANES channels of
 * the slice keep their kh * kw weights in registers along the row (3x3 and 5x5 windows fully
 * unrolled), the row's sums go into a buffer, and the epilogue runs over the buffer a few pixels at
 * a time (`epilogue_pixels`): per pixel, a SiLU's six operations on 32 channels cost more than the
 * taps. */

enum { LANES = 16, ROW_VALUES = 8192, MAX_TAPS = 64, TILE = 8 };
typedef float lanes __attribute__((vector_size(LANES * sizeof(float))));  /* one register of sums (gcc's vectors) */

struct depthwise_job {
    const float *x; const int64_t *xs; int64_t c; const float *w; int64_t kh, kw, sh, sw, dh, dw;
    const float *acc; const int64_t *accs; float *y; const int64_t *ys; float *y2; const int64_t *ys2;
    int64_t oh, ow, slice, slices; const epilogue_op *ops; int n_ops;
};

/* Sums of channels [q0, q0 + LANES) of pixels [x0, x1) of one output row into row[ox * ld + q0 - c0]:
 * `line` the data at the row's first window's top-left, channel 0. KH, KW constant where inlined
 * with constants. */
static inline __attribute__((always_inline)) void depthwise_lanes(
        const float *line, const int64_t *xs, const float *w, int64_t c, int64_t q0, int64_t c0, int64_t x0,
        int64_t x1, int64_t sw, int64_t dh, int64_t dw, float *row, int64_t ld, const int64_t KH, const int64_t KW) {
    lanes wv[MAX_TAPS];
    for (int64_t t = 0; t < KH * KW; t++) memcpy(&wv[t], w + t * c + q0, sizeof(lanes));
    for (int64_t ox = x0; ox < x1; ox++) {
        const float *origin = line + ox * sw * xs[2] + q0;
        lanes sum = {0};
        for (int64_t i = 0; i < KH; i++)
            for (int64_t k = 0; k < KW; k++) {
                lanes a;
                memcpy(&a, origin + i * dh * xs[1] + k * dw * xs[2], sizeof a);
                sum += a * wv[i * KW + k];
            }
        memcpy(row + ox * ld + q0 - c0, &sum, sizeof sum);
    }
}

static void depthwise_unit(void *context, int64_t unit) {
    const struct depthwise_job *j = context;
    float row[ROW_VALUES];
    const int64_t r = unit / j->slices, c0 = unit % j->slices * j->slice;
    const int64_t cn = j->c - c0 < j->slice ? j->c - c0 : j->slice, img = r / j->oh, oy = r % j->oh;
    const float *line = j->x + img * j->xs[0] + oy * j->sh * j->xs[1];
    const int64_t sc = j->xs[3], taps = j->kh * j->kw;
    int64_t q0 = c0;
    /* TILE pixels at a time across the slice: the windows they read stay in L1 for every LANES. */
    const int64_t vectors = sc == 1 && taps <= MAX_TAPS ? cn / LANES * LANES : 0;
    for (int64_t x0 = 0; vectors && x0 < j->ow; x0 += TILE) {
        const int64_t x1 = x0 + TILE < j->ow ? x0 + TILE : j->ow;
        for (q0 = c0; q0 < c0 + vectors; q0 += LANES) {
            if (j->kh == 3 && j->kw == 3)
                depthwise_lanes(line, j->xs, j->w, j->c, q0, c0, x0, x1, j->sw, j->dh, j->dw, row, cn, 3, 3);
            else if (j->kh == 5 && j->kw == 5)
                depthwise_lanes(line, j->xs, j->w, j->c, q0, c0, x0, x1, j->sw, j->dh, j->dw, row, cn, 5, 5);
            else
                depthwise_lanes(line, j->xs, j->w, j->c, q0, c0, x0, x1, j->sw, j->dh, j->dw, row, cn, j->kh, j->kw);
        }
    }
    q0 = c0 + vectors;
    for (int64_t q = q0; q < c0 + cn; q++)  /* (strided channels, or the last few: one by one) */
        for (int64_t ox = 0; ox < j->ow; ox++) {
            const float *origin = line + ox * j->sw * j->xs[2] + q * sc;
            float sum = 0.0f;
            for (int64_t i = 0; i < j->kh; i++)
                for (int64_t k = 0; k < j->kw; k++)
                    sum += origin[i * j->dh * j->xs[1] + k * j->dw * j->xs[2]] * j->w[(i * j->kw + k) * j->c + q];
            row[ox * cn + q - c0] = sum;
        }
    store_row(row, cn, j->oh, j->ow, img, oy, c0, j->acc, j->accs, j->y, j->ys, j->y2, j->ys2, j->ops, j->n_ops);
}

int xrelay_depthwise(const float *x, const int64_t *xs, int64_t n, int64_t c, const float *w, int64_t kh, int64_t kw,
                     int64_t sh, int64_t sw, int64_t dh, int64_t dw, const float *acc, const int64_t *accs, float *y,
                     const int64_t *ys, float *y2, const int64_t *ys2, int64_t oh, int64_t ow, int threads,
                     const epilogue_op *ops, int n_ops) {
    if (n * oh * ow < 1 || c < 1) return 0;
    if (ow > ROW_VALUES) return -1;  /* (`native_depthwise` does not call with such rows) */
    int64_t slice = ROW_VALUES / ow;
    slice = slice >= c ? c : (slice >= LANES ? slice / LANES * LANES : slice);
    /* Few rows (7 x 7 outputs): narrower slices, so that every thread has units to claim. */
    while (threads > 1 && n * oh * ((c + slice - 1) / slice) < 4 * threads && slice >= 2 * LANES)
        slice = (slice / 2 + LANES - 1) / LANES * LANES;
    const int64_t slices = (c + slice - 1) / slice;
    struct depthwise_job job = {x, xs, c, w, kh, kw, sh, sw, dh, dw, acc, accs, y, ys, y2, ys2, oh, ow, slice,
                                slices, ops, n_ops};
    parallel_for(threads, n * oh * slices, depthwise_unit, &job);
    return 0;
}
