// Driver for EA's Dem Bones (github.com/electronicarts/dem-bones), the Track2Rig benchmark's
// second anchor (issue 10). Bench code, not part of the product: it is compiled at bench time
// by bench/rig.sh against Dem Bones' header-only library fetched OUTSIDE the repo
// (/work/ext/dembones/include) and Debian's Eigen; nothing of Dem Bones is committed here.
// Their CLI needs the FBX SDK and Alembic, which we do not have, so this mirrors what
// src/command/mainCmd.cpp does with a mesh sequence and no input skeleton: set nB, init()
// (LBG-VQ clustering), compute() with the CLI's convergence test (tolerance 1e-3, patience 3),
// then computeRTB() for the bind matrices of the bones (bindUpdate 2, as in the data README's
// reference figures: joints at the p-norm centroids, grouped under one root).
//
//   dembones_run IN.bin OUTDIR BONES [ITERS=30] [BIND_UPDATE=2] [NNZ=8]
//
// IN.bin (written by bench/t2r/t2r.py dump): "AMDB", int32 T, N, E, float32 points [T][N][3],
// int32 edges [E][2] (the smoothness graph: mesh edges, or k nearest neighbours).
// Rest pose = frame 0 (our tracks carry no separate rest mesh). Writes OUTDIR/recon.npy
// float32 [T,N,3] (sum_j w_ij M_j(t) u_i, its own reconstruction), pred_joints.npy float32
// [T,B,3] (each bone's bind position moved by its transform) and dembones_log.json.
#include <DemBones/DemBonesExt.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// The CLI's stopping rule (mainCmd.cpp MyDemBones::cbIterEnd), so iteration counts match it.
class Model : public Dem::DemBonesExt<double, float> {
public:
    double tolerance = 1e-3;
    int patience = 3;
    int iters_done = 0;
    std::vector<double> rmse_log;
    void run()
    {
        prev_ = -1;
        left_ = patience;
        Dem::DemBonesExt<double, float>::compute();
    }
    bool cbIterEnd() override
    {
        double e = rmse();
        rmse_log.push_back(e);
        iters_done = iter + 1;
        if (e < prev_ * (1 + weightEps) && (prev_ - e) < tolerance * prev_) {
            if (--left_ == 0) return true;
        } else {
            left_ = patience;
        }
        prev_ = e;
        return false;
    }

private:
    double prev_ = -1;
    int left_ = 3;
};

// .npy v1.0 float32 C-order writer: the scorer reads these with numpy.load.
bool write_npy(const std::string &path, const float *data, const std::vector<size_t> &shape)
{
    std::string dims;
    size_t count = 1;
    for (size_t i = 0; i < shape.size(); i++) {
        dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
        count *= shape[i];
    }
    std::string hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
    while ((10 + hdr.size() + 1) % 64) hdr += ' ';
    hdr += '\n';
    FILE *f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    uint16_t hl = (uint16_t)hdr.size();
    bool ok = std::fwrite("\x93NUMPY\x01\x00", 1, 8, f) == 8 && std::fwrite(&hl, 2, 1, f) == 1 &&
              std::fwrite(hdr.data(), 1, hdr.size(), f) == hdr.size() &&
              std::fwrite(data, sizeof(float), count, f) == count;
    return std::fclose(f) == 0 && ok;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: dembones_run IN.bin OUTDIR BONES [ITERS=30] [BIND_UPDATE=2] [NNZ=8]\n");
        return 2;
    }
    std::string in = argv[1], out = argv[2];
    int bones = std::atoi(argv[3]);
    int iters = argc > 4 ? std::atoi(argv[4]) : 30;
    int bind = argc > 5 ? std::atoi(argv[5]) : 2;
    int nnz = argc > 6 ? std::atoi(argv[6]) : 8;
    FILE *f = std::fopen(in.c_str(), "rb");
    char magic[4];
    int32_t dim[3];
    if (!f || std::fread(magic, 1, 4, f) != 4 || std::memcmp(magic, "AMDB", 4) || std::fread(dim, 4, 3, f) != 3 ||
        dim[0] < 2 || dim[1] < 1 || dim[2] < 0 || bones < 1) {
        std::fprintf(stderr, "dembones_run: %s: not an AMDB dump (or bad bone count)\n", in.c_str());
        return 2;
    }
    const int T = dim[0], N = dim[1], E = dim[2];
    std::vector<float> P((size_t)T * N * 3);
    std::vector<int32_t> edges((size_t)E * 2);
    if (std::fread(P.data(), 4, P.size(), f) != P.size() ||
        (E && std::fread(edges.data(), 4, edges.size(), f) != edges.size())) {
        std::fprintf(stderr, "dembones_run: %s: truncated\n", in.c_str());
        return 2;
    }
    std::fclose(f);

    auto t0 = std::chrono::steady_clock::now();
    Model m;
    m.nIters = iters;
    m.nnz = nnz;
    m.bindUpdate = bind;
    m.nV = N;
    m.nS = 1;
    m.nF = T;
    m.fStart.resize(2);
    m.fStart << 0, T;
    m.subjectID = Eigen::VectorXi::Zero(T);
    m.v.resize(3 * T, N);
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++)
            for (int k = 0; k < 3; k++) m.v(3 * t + k, n) = P[((size_t)t * N + n) * 3 + k];
    m.u.resize(3, N);
    for (int n = 0; n < N; n++)
        for (int k = 0; k < 3; k++) m.u(k, n) = m.v(k, n);
    // Two-vertex "polygons": Dem Bones only reads consecutive vertex pairs of each polygon
    // (computeSmoothSolver), so an edge list is its mesh graph exactly.
    m.fv.resize(E);
    for (int e = 0; e < E; e++) m.fv[e] = {edges[2 * e], edges[2 * e + 1]};
    m.nB = bones;
    m.init();
    int init_bones = m.nB;
    m.run();
    Eigen::MatrixXd lr, lt, gb, lbr, lbt;
    m.computeRTB(0, lr, lt, gb, lbr, lbt, false);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const int B = m.nB;
    std::vector<float> rec((size_t)T * N * 3), pj((size_t)T * B * 3);
    for (int n = 0; n < N; n++) {
        Eigen::Vector4d u(m.u(0, n), m.u(1, n), m.u(2, n), 1.0);
        for (int t = 0; t < T; t++) {
            Eigen::Vector4d p = Eigen::Vector4d::Zero();
            for (Eigen::SparseMatrix<double>::InnerIterator it(m.w, n); it; ++it)
                p += it.value() * (m.m.block<4, 4>(4 * t, 4 * it.row()) * u);
            for (int k = 0; k < 3; k++) rec[((size_t)t * N + n) * 3 + k] = (float)p(k);
        }
    }
    for (int j = 0; j < B; j++) {
        Eigen::Vector4d c = gb.block<4, 1>(0, 4 * j + 3);
        for (int t = 0; t < T; t++) {
            Eigen::Vector4d p = m.m.block<4, 4>(4 * t, 4 * j) * c;
            for (int k = 0; k < 3; k++) pj[((size_t)t * B + j) * 3 + k] = (float)p(k);
        }
    }
    if (!write_npy(out + "/recon.npy", rec.data(), {(size_t)T, (size_t)N, 3}) ||
        !write_npy(out + "/pred_joints.npy", pj.data(), {(size_t)T, (size_t)B, 3})) {
        std::fprintf(stderr, "dembones_run: cannot write into %s\n", out.c_str());
        return 1;
    }
    FILE *lg = std::fopen((out + "/dembones_log.json").c_str(), "w");
    if (lg) {
        std::fprintf(lg, "{\"T\": %d, \"N\": %d, \"edges\": %d, \"bones_requested\": %d, \"bones_after_init\": %d, "
                         "\"bones\": %d, \"iters\": %d, \"iters_done\": %d, \"bind_update\": %d, \"nnz\": %d, "
                         "\"seconds\": %.3f, \"rmse\": %.6g}\n",
                     T, N, E, bones, init_bones, B, iters, m.iters_done, bind, nnz, secs,
                     m.rmse_log.empty() ? -1.0 : m.rmse_log.back());
        std::fclose(lg);
    }
    return 0;
}
