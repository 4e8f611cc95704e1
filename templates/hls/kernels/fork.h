// hlsgen HLS kernels: stream duplication for a tensor read by several layers (a fork before a
// residual branch). Each output edge has its own FIFO, sized by the compiler, so the slower
// reader never stalls the faster one beyond that depth. Three or more readers use a chain of
// fork2 (the top function declares the intermediate streams).
#ifndef HLSGEN_FORK_H
#define HLSGEN_FORK_H

#include "hlsgen_common.h"

namespace hlsgen {

template <int BEATS, class T>
void fork2(hls::stream<T>& in, hls::stream<T>& a, hls::stream<T>& b) {
BEAT:
    for (int i = 0; i < BEATS; i++) {
#pragma HLS PIPELINE II=1
        const T v = in.read();
        a.write(v);
        b.write(v);
    }
}

}  // namespace hlsgen

#endif
