/* Winograd F(m x m, 3 x 3) convolution, m = 2 or 4, float32, over strided NHWC views.
 *
 * One call computes the whole convolution with no Python in between: blocks of output tile rows,
 * each in three phases split over the OpenMP threads (the input transform B^T d B of each tile, the
 * a*a point-wise products as one sgemm per point, the output transform A^T M A of each tile written
 * through the epilogue), so a part costs no GIL hand-off and a barrier costs microseconds. The
 * products call numpy's OpenBLAS (single-threaded while the caller holds `split_blas_threads`)
 * through the function pointer the caller passes. Channels are innermost in every loop that
 * touches data, so gcc vectorises them.
 *
 * The epilogue is a list of elementwise operations applied to each output value before it is
 * stored: value = op(value, operand), the operand a scalar or a strided array over (n, oh, ow, f)
 * (a bias is an array of strides (0, 0, 0, 1), a residual one of the output's shape).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*sgemm_fn)(int order, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                         int64_t ldc);

enum { ROW_MAJOR = 101, NO_TRANS = 111 };
enum { EPI_ADD = 0, EPI_SUB = 1, EPI_MUL = 2, EPI_MAX = 3, EPI_MIN = 4, EPI_RSUB = 5 };

typedef struct {
    int32_t kind;      /* EPI_* */
    int32_t scalar;    /* 1: `value` is the operand; 0: `data` at the strides */
    float value;
    const float *data;
    int64_t strides[4]; /* elements, over (n, oh, ow, f) */
} epilogue_op;

static inline float apply(int kind, float v, float o) {
    switch (kind) {
    case EPI_ADD: return v + o;
    case EPI_SUB: return v - o;
    case EPI_MUL: return v * o;
    case EPI_MAX: return v != v || o != o ? v + o : (v > o ? v : o); /* NaN in, NaN out: arith.maximumf */
    case EPI_MIN: return v != v || o != o ? v + o : (v < o ? v : o);
    default: return o - v;
    }
}

/* Input transform of one row of a tile for F(2,3) (a = 4): B^T applied along the row. */
#define BT2(d0, d1, d2, d3, o0, o1, o2, o3) \
    do { o0 = d0 - d2; o1 = d1 + d2; o2 = d2 - d1; o3 = d1 - d3; } while (0)
#define BT4(d0, d1, d2, d3, d4, d5, o0, o1, o2, o3, o4, o5) \
    do { o0 = 4 * d0 - 5 * d2 + d4; o1 = -4 * d1 - 4 * d2 + d3 + d4; o2 = 4 * d1 - 4 * d2 - d3 + d4; \
         o3 = -2 * d1 - d2 + 2 * d3 + d4; o4 = 2 * d1 - d2 - 2 * d3 + d4; o5 = 4 * d1 - 5 * d3 + d5; } while (0)

/* V[p][t][c] for the tiles [t0, t1) of a block whose first tile row is `row0` (in tile rows over n*th). */
static void input_transform(const float *x, const int64_t *xs, int64_t h, int64_t w, int64_t c, int64_t th,
                            int64_t tw, int m, int64_t row0, int64_t t0, int64_t t1, int64_t tiles, float *v) {
    const int a = m + 2;
    float d[6][6][64], r[6][6][64];
    for (int64_t t = t0; t < t1; t++) {
        int64_t row = row0 + t / tw, tx = t % tw;
        int64_t img = row / th, ty = row % th;
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
static void output_transform(const float *mm, int64_t tiles, int64_t f, int m, int64_t th, int64_t tw,
                             int64_t oh, int64_t ow, int64_t row0, int64_t t0, int64_t t1, const float *acc,
                             const int64_t *accs, float *y, const int64_t *ys, float *y2, const int64_t *ys2,
                             const epilogue_op *ops, int n_ops) {
    const int a = m + 2;
    float r[4][6][64], o[4][4][64];
    for (int64_t t = t0; t < t1; t++) {
        int64_t row = row0 + t / tw, tx = t % tw;
        int64_t img = row / th, ty = row % th;
        for (int64_t f0 = 0; f0 < f; f0 += 64) {
            int64_t fn = f - f0 < 64 ? f - f0 : 64;
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
                    float *dst = y + img * ys[0] + yy * ys[1] + xx * ys[2] + f0 * ys[3];
                    float *val = o[i][j];
                    if (acc) {
                        const float *from = acc + img * accs[0] + yy * accs[1] + xx * accs[2] + f0 * accs[3];
                        for (int64_t q = 0; q < fn; q++) val[q] += from[q * accs[3]];
                    }
                    for (int e = 0; e < n_ops; e++) {
                        const epilogue_op *op = &ops[e];
                        if (op->scalar) {
                            float s = op->value;
                            for (int64_t q = 0; q < fn; q++) val[q] = apply(op->kind, val[q], s);
                        } else {
                            const float *src = op->data + img * op->strides[0] + yy * op->strides[1]
                                               + xx * op->strides[2] + f0 * op->strides[3];
                            int64_t sf = op->strides[3];
                            for (int64_t q = 0; q < fn; q++) val[q] = apply(op->kind, val[q], src[q * sf]);
                        }
                    }
                    if (ys[3] == 1)
                        memcpy(dst, val, (size_t)fn * sizeof(float));
                    else
                        for (int64_t q = 0; q < fn; q++) dst[q * ys[3]] = val[q];
                    if (y2) {
                        float *dst2 = y2 + img * ys2[0] + yy * ys2[1] + xx * ys2[2] + f0 * ys2[3];
                        for (int64_t q = 0; q < fn; q++) dst2[q * ys2[3]] = val[q];
                    }
                }
            }
        }
    }
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

/* The convolution of x (an (n, h, w, c) view, strides xs in elements, read from (0, 0); positions
 * past h or w read as 0) with u = G g G^T as (a*a, c, f) contiguous, plus `acc` unless NULL, through
 * the epilogue into y and, unless NULL, also y2 (all (n, oh, ow, f) views, strides in elements). The n*th tile rows are cut into blocks whose transformed tiles and products take about
 * `block_bytes` at most, unless u is the bigger operand (a multiple of `threads` blocks, so the threads' shares are even); each
 * thread computes whole blocks in its own buffers: one fork and join per call, no barrier inside.
 * Returns 0, or -1 when out of memory. */
int xrelay_winograd(const float *x, const int64_t *xs, int64_t n, int64_t h, int64_t w, int64_t c,
                    const float *u, int64_t f, const float *acc, const int64_t *accs, float *y, const int64_t *ys,
                    float *y2, const int64_t *ys2, int64_t oh, int64_t ow, int m, int threads,
                    int64_t block_bytes, sgemm_fn sgemm, const epilogue_op *ops, int n_ops) {
    const int a = m + 2, points = a * a;
    const int64_t th = (oh + m - 1) / m, tw = (ow + m - 1) / m, rows = n * th;
    const int64_t per_row = (int64_t)points * tw * (c + f) * (int64_t)sizeof(float);
    int64_t blocks = (rows * per_row + block_bytes - 1) / block_bytes;
    if (rows * per_row < 4 * (int64_t)points * c * f * (int64_t)sizeof(float))
        blocks = 1; /* every block reads all of u again: cutting pays only when the tiles outweigh it */
    if (blocks > 1 || rows >= threads)
        blocks = (blocks + threads - 1) / threads * threads;
    if (blocks > rows) blocks = rows;
    if (blocks < 1) blocks = 1;
    const int64_t block = (rows + blocks - 1) / blocks;
    int failed = 0;
    #pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int64_t b = 0; b < blocks; b++) {
        int64_t row0 = b * block, nrows = rows - row0 < block ? rows - row0 : block;
        if (nrows <= 0) continue;
        int64_t tiles = nrows * tw;
        float *v = scratch((size_t)(block * tw) * points * (c + f) * sizeof(float));
        if (!v) { failed = 1; continue; }
        float *mm = v + (size_t)(block * tw) * points * c;
        input_transform(x, xs, h, w, c, th, tw, m, row0, 0, tiles, tiles, v);
        for (int p = 0; p < points; p++)
            sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, tiles, f, c, 1.0f, v + (int64_t)p * tiles * c, c,
                  u + (int64_t)p * c * f, f, 0.0f, mm + (int64_t)p * tiles * f, f);
        output_transform(mm, tiles, f, m, th, tw, oh, ow, row0, 0, tiles, acc, accs, y, ys, y2, ys2, ops, n_ops);
    }
    return failed ? -1 : 0;
}
