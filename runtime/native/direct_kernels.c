/* A direct convolution, for one whose reduction (kh * kw * c) is short, such as a network's first
 * layer over three colour channels (compiled after conv_kernels.c, whose pool, scratch buffers and
 * `store_pixels` it uses). im2col would copy every patch, and a GEMM with so short a reduction runs
 * far below its peak; here the sums of DIRECT_PIXELS output pixels and 2 * LANES filters stay in
 * registers over the whole reduction, each weight vector read once for all of them. Output rows are
 * the parallel work; a row's sums go into a buffer that `store_pixels` finishes (plus `acc`, the
 * epilogue, into y and y2). */

enum { DIRECT_PIXELS = 6, DIRECT_FILTERS = 2 * LANES };

struct direct_job {
    const float *x; const int64_t *xs; int64_t c; const float *w; int64_t f, fp, kh, kw, sh, sw, dh, dw;
    const float *acc; const int64_t *accs; float *y; const int64_t *ys; float *y2; const int64_t *ys2;
    int64_t oh, ow; const epilogue_op *ops; int n_ops; int failed;
};

/* Sums of pixels [x0, x0 + PX) of the row at `top`, filters [f0, f0 + DIRECT_FILTERS), into row. */
static inline __attribute__((always_inline)) void direct_pixels(
        const struct direct_job *j, const float *top, int64_t x0, int64_t f0, float *row, const int PX) {
    lanes s0[DIRECT_PIXELS] = {0}, s1[DIRECT_PIXELS] = {0};
    const float *wk = j->w + f0;
    const int64_t step = j->sw * j->xs[2];
    for (int64_t i = 0; i < j->kh; i++)
        for (int64_t k = 0; k < j->kw; k++) {
            const float *tap = top + i * j->dh * j->xs[1] + (x0 * j->sw + k * j->dw) * j->xs[2];
            for (int64_t q = 0; q < j->c; q++, wk += j->fp) {
                lanes w0, w1;
                memcpy(&w0, wk, sizeof w0);
                memcpy(&w1, wk + LANES, sizeof w1);
                const float *v = tap + q * j->xs[3];
                for (int p = 0; p < PX; p++) {
                    const float a = v[p * step];
                    s0[p] += a * w0;
                    s1[p] += a * w1;
                }
            }
        }
    for (int p = 0; p < PX; p++) {
        memcpy(row + (x0 + p) * j->fp + f0, &s0[p], sizeof s0[p]);
        memcpy(row + (x0 + p) * j->fp + f0 + LANES, &s1[p], sizeof s1[p]);
    }
}

static void direct_row(void *context, int64_t r) {
    struct direct_job *j = context;
    float *row = scratch((size_t)(j->ow * j->fp) * sizeof(float));
    if (!row) { j->failed = 1; return; }
    const float *top = j->x + r / j->oh * j->xs[0] + r % j->oh * j->sh * j->xs[1];
    const int64_t whole = j->ow / DIRECT_PIXELS * DIRECT_PIXELS;
    for (int64_t f0 = 0; f0 < j->fp; f0 += DIRECT_FILTERS) {
        for (int64_t x0 = 0; x0 < whole; x0 += DIRECT_PIXELS)
            direct_pixels(j, top, x0, f0, row, DIRECT_PIXELS);
        for (int64_t x0 = whole; x0 < j->ow; x0++)
            direct_pixels(j, top, x0, f0, row, 1);
    }
    store_pixels(row, j->fp, j->oh, j->ow, r * j->ow, (r + 1) * j->ow, 0, j->f, j->acc, j->accs, j->y, j->ys,
                 j->y2, j->ys2, j->ops, j->n_ops);
}

/* wmat: (kh*kw*c, f), rows in (kh, kw, c) order. Returns 0, or -1 when out of memory. */
int xrelay_direct(const float *x, const int64_t *xs, int64_t n, int64_t c, const float *wmat, int64_t f,
                  int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw, const float *acc,
                  const int64_t *accs, float *y, const int64_t *ys, float *y2, const int64_t *ys2, int64_t oh,
                  int64_t ow, int threads, const epilogue_op *ops, int n_ops) {
    const int64_t k = kh * kw * c, fp = (f + DIRECT_FILTERS - 1) / DIRECT_FILTERS * DIRECT_FILTERS;
    float *w = calloc((size_t)(k * fp), sizeof(float));  /* the filters padded to whole vectors */
    if (!w) return -1;
    for (int64_t r = 0; r < k; r++) memcpy(w + r * fp, wmat + r * f, (size_t)f * sizeof(float));
    struct direct_job job = {x, xs, c, w, f, fp, kh, kw, sh, sw, dh, dw, acc, accs, y, ys, y2, ys2, oh, ow,
                             ops, n_ops, 0};
    parallel_for(threads, n * oh, direct_row, &job);
    free(w);
    return job.failed ? -1 : 0;
}
