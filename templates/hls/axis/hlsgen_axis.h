// hlsgen: the output side channels of `hw.tlast: true` -- TLAST on the last beat of every frame, TKEEP and
// TSTRB all ones -- so that an AXI DMA (S2MM) or any packet-based AXI-Stream slave connects directly.
//
// The beat type of such a port is `hlsgen::axis_beat<W>::type`:
//   - Vitis HLS: ap_axiu<W, 0, 0, 0> from the vendor's ap_axi_sdata.h (ports TDATA, TKEEP, TSTRB, TLAST);
//   - Vivado HLS (hw.hls.tool: vivado, which defines HLSGEN_VIVADO_HLS in top.h): a struct whose members
//     are named after the side channels, which Vivado HLS maps to TKEEP/TSTRB/TLAST (its ap_axiu cannot
//     have zero-width TUSER/TID/TDEST);
//   - g++ C simulation without the vendor headers (the ap_int copy of the hls4ml package has no
//     ap_axi_sdata.h): the same struct. Only data, keep, strb and last are used, as ap_axiu names them.
#ifndef HLSGEN_AXIS_H
#define HLSGEN_AXIS_H

#include <ap_int.h>
#include <hls_stream.h>

#if !defined(HLSGEN_VIVADO_HLS)
#if defined(__has_include)
#if __has_include(<ap_axi_sdata.h>)
#define HLSGEN_AP_AXIU 1
#endif
#else
#define HLSGEN_AP_AXIU 1  // a compiler without __has_include runs inside a Vitis installation
#endif
#endif

#ifdef HLSGEN_AP_AXIU
#include <ap_axi_sdata.h>
#endif

namespace hlsgen {

// An AXI-Stream beat with side channels, as named by ap_axiu.
template <int W>
struct axis_side_channels {
    ap_uint<W> data;
    ap_uint<(W + 7) / 8> keep;
    ap_uint<(W + 7) / 8> strb;
    ap_uint<1> last;
};

template <int W>
struct axis_beat {
#ifdef HLSGEN_AP_AXIU
    typedef ap_axiu<W, 0, 0, 0> type;
#else
    typedef axis_side_channels<W> type;
#endif
};

// Copies the BEATS beats of one frame from the last layer's stream to the output port, TLAST set on the
// last one, every byte valid (TKEEP = TSTRB = all ones). One beat per cycle.
template <int BEATS, int W, typename B>
void axis_last(hls::stream<ap_uint<W> >& in, hls::stream<B>& out) {
AXIS_LAST:
    for (int i = 0; i < BEATS; i++) {
#pragma HLS PIPELINE II=1
        B beat;
        beat.data = in.read();
        beat.keep = -1;
        beat.strb = -1;
        beat.last = i == BEATS - 1;
        out.write(beat);
    }
}

}  // namespace hlsgen

#endif
