// hlsgen C-sim tap (built only with -DHLSGEN_TAP): after a layer has run, append every beat of
// its output stream to $HLSGEN_TAP_DIR/<stream>.hex (default ./taps), in the hex format of
// OUT/vectors/layers/, then put the beats back. `hlsgen csim` compares these files with the
// golden ones to name the first divergent layer, pixel and channel. Testbench code only: in C
// simulation the top function runs its layers one after the other, so a stream holds a layer's
// whole frame when the tap reads it.
#ifndef HLSGEN_TAP_H
#define HLSGEN_TAP_H

#include <ap_int.h>
#include <hls_stream.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace hlsgen_tap {

template <int W>
void tap(hls::stream<ap_uint<W> >& s, const char* name, int beats) {
    const char* dir = std::getenv("HLSGEN_TAP_DIR");
    const std::string path = std::string(dir ? dir : "taps") + "/" + name + ".hex";
    std::FILE* f = std::fopen(path.c_str(), "a");
    static const char digits[] = "0123456789abcdef";
    const int n_beats = (int)s.size() < beats ? (int)s.size() : beats;  // a short frame is reported by csim
    for (int i = 0; i < n_beats; i++) {
        const ap_uint<W> beat = s.read();
        if (f) {
            for (int n = W / 4 - 1; n >= 0; n--) std::fputc(digits[(int)beat.range(4 * n + 3, 4 * n)], f);
            std::fputc('\n', f);
        }
        s.write(beat);
    }
    if (f) std::fclose(f);
}

}  // namespace hlsgen_tap

#endif
