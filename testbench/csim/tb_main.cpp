// hlsgen C-sim testbench: streams every frame of OUT/vectors/input.hex through the top function,
// back to back, and compares every output beat with the golden model's (OUT/vectors/output*.hex).
//
//   usage: csim VECTORS_DIR        (the Vitis scripts pass it: csim.argv / csim_design -argv)
//   exit:  0 all outputs bit-exact, 1 a mismatch (the first one is printed), 2 unreadable vectors
#include <cstdio>
#include <string>

#include "tb_glue.h"

int main(int argc, char** argv) {
    const std::string vectors = hlsgen_tb::find_vectors(argc, argv);
    if (vectors.empty()) {
        std::printf("ERROR: usage: csim VECTORS_DIR (the folder of OUT/vectors)\n");
        return 2;
    }
    std::printf("vectors: %s\n", vectors.c_str());
    return hlsgen_tb::run_design(vectors);
}
