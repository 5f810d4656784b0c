/* A copy between two views of one (n0, n1, n2, n3) shape with any strides (in elements), the rows of
 * its first two axes cut into parts claimed by the calling thread and conv_kernels.c's worker pool
 * (compiled after it). A transposing copy (a channel shuffle into a pad's interior) is a gather along
 * the last axis, the destination's dense one: numpy's copy runs such a view element by element. */

struct copy_job {
    const float *src; float *dst; int64_t shape[4], ss[4], ds[4], rows, size;
};

static void copy_part(void *context, int64_t part) {
    const struct copy_job *j = context;
    const int64_t lo = part * j->size, hi = lo + j->size < j->rows ? lo + j->size : j->rows;
    const int64_t n2 = j->shape[2], n3 = j->shape[3], s3 = j->ss[3], d3 = j->ds[3];
    for (int64_t r = lo; r < hi; r++) {
        const float *s = j->src + r / j->shape[1] * j->ss[0] + r % j->shape[1] * j->ss[1];
        float *d = j->dst + r / j->shape[1] * j->ds[0] + r % j->shape[1] * j->ds[1];
        for (int64_t i = 0; i < n2; i++, s += j->ss[2], d += j->ds[2]) {
            if (s3 == 1 && d3 == 1)
                memcpy(d, s, (size_t)n3 * sizeof(float));
            else
                for (int64_t q = 0; q < n3; q++) d[q * d3] = s[q * s3];
        }
    }
}

int xrelay_copy(const float *src, const int64_t *ss, float *dst, const int64_t *ds, const int64_t *shape,
                int threads) {
    /* The longer of the last two axes innermost: a short inner loop costs its overhead per element. */
    const int swap = shape[3] < shape[2] && !(ss[3] == 1 && ds[3] == 1);
    const int i2 = swap ? 3 : 2, i3 = swap ? 2 : 3;
    struct copy_job job = {src, dst, {shape[0], shape[1], shape[i2], shape[i3]}, {ss[0], ss[1], ss[i2], ss[i3]},
                           {ds[0], ds[1], ds[i2], ds[i3]}, shape[0] * shape[1], 0};
    if (job.rows < 1 || shape[2] < 1 || shape[3] < 1) return 0;
    const int64_t parts = threads < job.rows ? threads : job.rows;
    job.size = (job.rows + parts - 1) / parts;
    parallel_for(threads, (job.rows + job.size - 1) / job.size, copy_part, &job);
    return 0;
}
