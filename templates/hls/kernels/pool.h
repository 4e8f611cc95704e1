// hlsgen HLS kernels: max and average pooling (windowed and global).
//
// Windowed pools read K_H*K_W window beats per output pixel from the sliding-window generator
// (padding taps hold PAD_VALUE: the lowest code for max, the input zero point for average); global
// pools read the whole frame directly (TAPS = IN_PIXELS). One flattened II=1 loop over (pixel, tap)
// with a wrapping tap counter; all channels of a beat per cycle (compares / adds only).
//   max:      y[c] = max over taps of x[c]                      (integer domain, no rescaling)
//   average:  two processes in a DATAFLOW region, so that one pixel's requant overlaps the next
//             pixel's window: window_sums (OUT_PIXELS*TAPS cycles) sums every channel and passes the
//             sums of a pixel as one beat; requant_lanes (OUT_PIXELS*FOLD cycles) requantizes PE
//             channels per cycle, FOLD = ceil(CHANNELS/PE) times per pixel:
//             v = (sum - TAPS*X_ZP) * M[c];  y = clamp(ZP + round_shift(v, S[c]), LO, HI)
//             The layer takes max(in_pixels, OUT_PIXELS * max(TAPS, FOLD)) cycles (the cycle model);
//             a global pool over 64 channels with PE = 1 is one requant unit.
// Average pools divide by the kernel area (TAPS) through M; tables M, S are [FOLD][PE].
//
// A max pool on pixels too wide for one beat takes its window fold-major (sliding_window TAP_FOLDS):
// TAP_FOLDS windows of TAPS beats per output pixel, CHANNELS (a fold's channels) lanes, one output beat
// (that fold of the pixel) each. So does an average pool of one requant for every channel (its last
// fold's padding lanes written as zero: LAST_C).
// global_avgpool_folded (below) reads a folded stream, PE channels a beat, for pools too wide for
// whole-pixel beats; global_maxpool_folded reads CHANNELS (a fold's channels) a beat, FOLDS beats a
// pixel.
// Config C: OUT_PIXELS, TAPS, CHANNELS, IN_BITS, IN_SIGNED, OUT_BITS, in_beat_t, out_beat_t; average
//           pools also X_ZP, ACC_BITS, MULT_BITS, PE, FOLD, ZP, LO, HI, ROUNDING, mult_t, shift_t,
//           sums_t. Global pools use IN_PIXELS (the frame) as their TAPS.
#ifndef HLSGEN_POOL_H
#define HLSGEN_POOL_H

#include "epilogue.h"
#include "hlsgen_common.h"

namespace hlsgen {

// The lane-wise max of `beat` and `best` (the beat itself where `first`), written back to `best`.
template <class C>
typename C::out_beat_t running_max(const typename C::in_beat_t& beat,
                                   typename code_type<C::IN_BITS, C::IN_SIGNED>::t best[C::CHANNELS], bool first) {
#pragma HLS INLINE
    typedef typename code_type<C::IN_BITS, C::IN_SIGNED>::t x_t;
    typename C::out_beat_t y = 0;
CHANNEL:
    for (int c = 0; c < C::CHANNELS; c++) {
#pragma HLS UNROLL
        const x_t v = channel_code<C::IN_BITS, C::IN_SIGNED>(beat, c);
        const x_t m = (first || v > best[c]) ? v : best[c];
        best[c] = m;
        set_channel<C::OUT_BITS>(y, c, m);
    }
    return y;
}

// Max over N beats of `in` per output pixel, per channel.
template <class C, int N, int PIXELS>
void max_of_beats(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out) {
#pragma HLS INLINE
    typename code_type<C::IN_BITS, C::IN_SIGNED>::t best[C::CHANNELS];
#pragma HLS ARRAY_PARTITION variable=best complete
    int t = 0;
TAP:
    for (int i = 0; i < PIXELS * N; i++) {
#pragma HLS PIPELINE II=1
        const typename C::out_beat_t y = running_max<C>(in.read(), best, t == 0);
        if (t == N - 1) out.write(y);
        step<N>(t);
    }
}

template <class C>
void maxpool(hls::stream<typename C::in_beat_t>& win, hls::stream<typename C::out_beat_t>& out) {
    max_of_beats<C, C::TAPS, C::OUT_PIXELS * C::TAP_FOLDS>(win, out);
}

template <class C>
void global_maxpool(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out) {
    max_of_beats<C, C::IN_PIXELS, 1>(in, out);
}

// A global max pool over a folded stream (pixels too wide for one beat): CHANNELS lanes, the FOLDS
// beats of a pixel consecutive. best[f] holds fold f's running max; the last pixel's beats leave as
// they are read, one output beat a fold, a beat a cycle. A pixel's last-beat padding lanes are zero
// in and stay zero out (the max of zeros).
template <class C>
void global_maxpool_folded(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out) {
    typename code_type<C::IN_BITS, C::IN_SIGNED>::t best[C::FOLDS][C::CHANNELS];
#pragma HLS ARRAY_PARTITION variable=best complete dim=2
    int f = 0, px = 0;
MAX:
    for (int i = 0; i < C::IN_PIXELS * C::FOLDS; i++) {
#pragma HLS PIPELINE II=1
        const typename C::out_beat_t y = running_max<C>(in.read(), best[f], px == 0);
        if (px == C::IN_PIXELS - 1) out.write(y);
        if (step<C::FOLDS>(f)) step<C::IN_PIXELS>(px);
    }
}

// Every channel's sum over N beats, one sums beat (CHANNELS x ACC_BITS) per output pixel.
template <class C, int N, int PIXELS>
void window_sums(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::sums_t>& sums) {
    ap_int<C::ACC_BITS> acc[C::CHANNELS];
#pragma HLS ARRAY_PARTITION variable=acc complete
    int t = 0;
SUM:
    for (int i = 0; i < PIXELS * N; i++) {
#pragma HLS PIPELINE II=1
        const typename C::in_beat_t beat = in.read();
        typename C::sums_t y = 0;
    CHANNEL:
        for (int c = 0; c < C::CHANNELS; c++) {
#pragma HLS UNROLL
            const ap_int<C::ACC_BITS> a = (t == 0 ? ap_int<C::ACC_BITS>(0) : acc[c]) +
                                          channel_code<C::IN_BITS, C::IN_SIGNED>(beat, c);
            acc[c] = a;
            y.range(c * C::ACC_BITS + C::ACC_BITS - 1, c * C::ACC_BITS) = a;
        }
        if (t == N - 1) sums.write(y);
        step<N>(t);
    }
}

// PE requant lanes over FOLD folds per pixel: lane p of fold f requantizes channel f*PE + p. Of a
// fold-major pool's TAP_FOLDS windows a pixel, the last has LAST_C live channels; its padding lanes
// are written as zero (they would requantize to the zero point).
template <class C, int N, int PIXELS>
void requant_lanes(hls::stream<typename C::sums_t>& sums, hls::stream<typename C::out_beat_t>& out,
                   const typename C::mult_t M[C::FOLD][C::PE], const typename C::shift_t S[C::FOLD][C::PE]) {
    static const int SUM_BITS = C::sums_t::width;
    const int x_zp = C::X_ZP;
    typename C::sums_t held = 0;
    FoldedBeat<C> beat;
    int f = 0, cbase = 0, wf = 0;
LANES:
    for (int i = 0; i < PIXELS * C::FOLD; i++) {
#pragma HLS PIPELINE II=1
        typename C::sums_t cur = f == 0 ? sums.read() : held;
        const int live = wf == C::TAP_FOLDS - 1 ? C::LAST_C : C::CHANNELS;
    LANE:
        for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
            ap_int<C::ACC_BITS> sum;
            sum.range(C::ACC_BITS - 1, 0) = cur.range(p * C::ACC_BITS + C::ACC_BITS - 1, p * C::ACC_BITS);
            const ap_int<C::ACC_BITS> centred = sum - ap_int<C::ACC_BITS>(N * x_zp);
            const ap_int<C::MULT_BITS> m = M[f][p];
            ap_uint<C::OUT_BITS> code = 0;
            if (cbase + p < live) code = requant<C>(scale_acc<0, C::MULT_BITS>(centred, m, m), S[f][p]);
            beat.put(p, code);
        }
        if (SUM_BITS > C::PE * C::ACC_BITS) held = cur >> (C::PE * C::ACC_BITS);
        if (f == C::FOLD - 1) step<C::TAP_FOLDS>(wf);
        beat.next(f, cbase, out);
    }
}

template <class C>
void avgpool(hls::stream<typename C::in_beat_t>& win, hls::stream<typename C::out_beat_t>& out,
             const typename C::mult_t M[C::FOLD][C::PE], const typename C::shift_t S[C::FOLD][C::PE]) {
#pragma HLS DATAFLOW
    hls::stream<typename C::sums_t> sums("sums");
#pragma HLS STREAM variable=sums depth=2
    window_sums<C, C::TAPS, C::OUT_PIXELS * C::TAP_FOLDS>(win, sums);
    requant_lanes<C, C::TAPS, C::OUT_PIXELS * C::TAP_FOLDS>(sums, out, M, S);
}

template <class C>
void global_avgpool(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
                    const typename C::mult_t M[C::FOLD][C::PE], const typename C::shift_t S[C::FOLD][C::PE]) {
#pragma HLS DATAFLOW
    hls::stream<typename C::sums_t> sums("sums");
#pragma HLS STREAM variable=sums depth=2
    window_sums<C, C::IN_PIXELS, 1>(in, sums);
    requant_lanes<C, C::IN_PIXELS, 1>(sums, out, M, S);
}

// A global average pool over a folded input stream (a pixel or its sums wider than 4096 bits): PE
// channels a beat, the FOLD beats of a pixel consecutive. acc[f][p] sums channel f*PE + p over the
// frame; on the last pixel's beats each fold's sums are requantized at once (PE lanes) and leave
// through FoldedBeat, so the layer takes IN_PIXELS * FOLD cycles, one input beat each.
template <class C>
void global_avgpool_folded(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
                           const typename C::mult_t M[C::FOLD][C::PE], const typename C::shift_t S[C::FOLD][C::PE]) {
    ap_int<C::ACC_BITS> acc[C::FOLD][C::PE];
#pragma HLS ARRAY_PARTITION variable=acc complete dim=2
    const int x_zp = C::X_ZP;
    FoldedBeat<C> beat;
    int f = 0, cbase = 0, px = 0;
SUM:
    for (int i = 0; i < C::IN_PIXELS * C::FOLD; i++) {
#pragma HLS PIPELINE II=1
        const typename C::in_beat_t x = in.read();
        const bool last = px == C::IN_PIXELS - 1;
    LANE:
        for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
            const ap_int<C::ACC_BITS> a = (px == 0 ? ap_int<C::ACC_BITS>(0) : acc[f][p]) +
                                          channel_code<C::IN_BITS, C::IN_SIGNED>(x, p);
            acc[f][p] = a;
            const ap_int<C::ACC_BITS> centred = a - ap_int<C::ACC_BITS>(C::IN_PIXELS * x_zp);
            const ap_int<C::MULT_BITS> m = M[f][p];
            ap_uint<C::OUT_BITS> code = 0;
            if (cbase + p < C::CHANNELS) code = requant<C>(scale_acc<0, C::MULT_BITS>(centred, m, m), S[f][p]);
            if (last) beat.put(p, code);
        }
        if (last) {
            beat.next(f, cbase, out);
        } else if (step<C::FOLD>(f)) {
            cbase = 0;
        } else {
            cbase += C::PE;
        }
        if (f == 0) step<C::IN_PIXELS>(px);
    }
}

}  // namespace hlsgen

#endif
