/* A batched matrix product cut into parts claimed by the calling thread and conv_kernels.c's worker
 * pool (compiled after it): out[b] = lhs[b] @ rhs[b], float32, each operand's rows or columns
 * contiguous (a transposed view is a transposed sgemm operand), any batch strides (0: broadcast).
 * A part is a range of the batch (along 0), of the product's rows (1) or of its columns (2), each one
 * single-threaded sgemm per batch element: no Python and no GIL between the parts. */

enum { TRANS = 112 };

struct matmul_job {
    const float *a, *b; float *c;
    int64_t batch, m, n, k, lda, ldb, ldc, sa, sb, sc, along, size;
    int ta, tb; sgemm_fn sgemm;
};

static void matmul_part(void *context, int64_t part) {
    const struct matmul_job *j = context;
    int64_t lo[3] = {0, 0, 0}, hi[3] = {j->batch, j->m, j->n};
    lo[j->along] = part * j->size;
    if (lo[j->along] + j->size < hi[j->along]) hi[j->along] = lo[j->along] + j->size;
    /* row r of a transposed lhs is its column r; column c of a transposed rhs is its row c */
    const int64_t a_row = j->ta == TRANS ? 1 : j->lda, b_col = j->tb == TRANS ? j->ldb : 1;
    for (int64_t b = lo[0]; b < hi[0]; b++)
        j->sgemm(ROW_MAJOR, j->ta, j->tb, hi[1] - lo[1], hi[2] - lo[2], j->k, 1.0f,
                 j->a + b * j->sa + lo[1] * a_row, j->lda, j->b + b * j->sb + lo[2] * b_col, j->ldb, 0.0f,
                 j->c + b * j->sc + lo[1] * j->ldc + lo[2], j->ldc);
}

int xrelay_matmul(const float *a, int64_t sa, int64_t lda, int ta, const float *b, int64_t sb, int64_t ldb, int tb,
                  float *c, int64_t sc, int64_t ldc, int64_t batch, int64_t m, int64_t n, int64_t k, int along,
                  int threads, sgemm_fn sgemm) {
    const int64_t extent = along == 0 ? batch : along == 1 ? m : n;
    if (extent < 1) return 0;
    const int64_t parts = threads < extent ? threads : extent;
    struct matmul_job job = {a, b, c, batch, m, n, k, lda, ldb, ldc, sa, sb, sc, along,
                             (extent + parts - 1) / parts, ta, tb, sgemm};
    parallel_for(threads, (extent + job.size - 1) / job.size, matmul_part, &job);
    return 0;
}
