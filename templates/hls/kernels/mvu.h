// hlsgen HLS kernels: the matrix-vector unit of conv (KxK, pointwise, grouped, depthwise) and dense
// layers, FINN MVAU style: one flattened loop, II=1, over
//   (output pixel, output fold nf < FOLD_O, tap t < TAPS, input fold sf < FOLD_I)
// with nf/t/sf counters that wrap (no division, no modulo), so a frame takes exactly
// OUT_PIXELS * FOLD_O * TAPS * FOLD_I cycles (hlsgen.hw.lower's cycle model) plus the pipeline depth.
//   - input: a tap's beat is read from the stream while nf == 0 (at sf == 0), as the sliding-window
//     generator emits it, unpacked once into its CIN codes and kept in `window[TAPS][CIN]` for the
//     folds nf > 0 (no read-then-compute); input fold sf takes codes kbase .. kbase+SIMD-1 (kbase a
//     counter: sf*SIMD). A folded input (IN_FOLD = SIMD < CIN, dense layers) brings those SIMD codes
//     as one beat per step instead: FOLD_I beats a tap, read while nf == 0; a depthwise conv reading
//     PE channels a beat (IN_FOLD = PE) reads a beat every step, the window fold-major (TAP_FOLDS);
//   - accumulators start at the bias on the first step of a fold (t == 0, sf == 0);
//   - the requant epilogue (RQ == PE) is inside the pipeline: on the last step of fold nf every PE
//     lane requantizes its channel nf*PE + p with parameters read from [FOLD_O][PE] ROMs at the fold
//     counter (one requant unit per lane, time-shared over the output channels), and the codes are
//     shifted into the output beat, written after its last fold (OUT_GROUP folds a beat: the output
//     stream's fold is OUT_GROUP * PE channels, or OUT_GROUP * RQ with time-shared units);
//   - time-shared requant units (RQ < PE, hlsgen.hw.packing.requant_units: PE/RQ <= TAPS*FOLD_I):
//     the last step of a fold hands its PE accumulators (and their skip codes) to a second process,
//     mvu_requant, whose II=1 loop requantizes RQ channels a cycle (PE/RQ cycles per fold, hidden
//     under the next fold's TAPS*FOLD_I steps); its tables are [RQ_FOLD][RQ], RQ_FOLD =
//     FOLD_O*PE/RQ, in the same order as the [FOLD_O][PE] tables (channel (nf*PE/RQ + q)*RQ + r);
//   - a residual skip beat is read on the first step of a pixel and shifted by PE channels per fold;
//     a folded one (pixels over 4096 bits, SKIP_FOLDS < FOLD_O) on the first step of every
//     SKIP_FOLDS-th fold, the last beat of a pixel serving the folds that are left.
//   acc[o] = B[o] + sum over taps t and group-input channels k of x[t][g(o)*CIN_G + k] * W(o, t, k)
// with g(o) the group of output channel o (grouped and depthwise layers only). The bias already holds -zp_x * sum(W) and padding taps hold zp_x.
//
// Multipliers: activations keep their exact type (ap_int<IN_BITS> / ap_uint<IN_BITS>: no widening).
// With C::PACK (GROUPS == 1, W_BITS <= 8, W_BITS + IN_BITS - IN_SIGNED <= 17) two PE lanes share
// one multiplier, as in Xilinx WP486 (DSP48E2 27x18): P = (w0 + w1 * 2^18) * x, then
// w0*x = sign-extended P[17:0] and w1*x = (P >> 18) + P[17] (the borrow of a negative low product).
// Exact for every operand in range (|w0*x| < 2^17); other widths use one multiplier per lane.
//
// Tables (weights.h):
//   W[PE][WORDS * SIMD]  lane p, word w = (nf*TAPS + t)*FOLD_I + sf, element s: the weight of output
//                        channel nf*PE + p, tap t, group-input channel sf*SIMD + s (0 beyond COUT/CIN_G).
//                        One ROM per PE lane of SIMD-wide words (top.cpp partitions dim 1 and reshapes
//                        dim 2 cyclic SIMD; BRAM when deep, LUTRAM when shallow).
//   B [FOLD_O][PE]; M, S [RQ_FOLD][RQ]; MN [MN_FOLD][RQ] (LeakyReLU); SM [SM_FOLD][RQ] (residual);
//   M1, S1 [M1_FOLD][RQ], MN1 [MN1_FOLD][RQ], B2 [B2_FOLD][RQ]: the two-step epilogue (epilogue.h);
//   a FOLD of 1 (a dummy row) where the layer has none (RQ = PE, RQ_FOLD = FOLD_O without sharing).
//
// Config C: TAPS, OUT_PIXELS, CIN, COUT, GROUPS, CIN_G, COUT_G, PE, SIMD, FOLD_O, FOLD_I, WORDS, RQ, RQ_FOLD, OUT_GROUP, IN_FOLD,
//           PACK, IN_BITS, IN_SIGNED, W_BITS, ACC_BITS, MULT_BITS, SKIP_MULT_BITS, OUT_BITS, ZP, LO,
//           HI, ROUNDING, HAS_MULT_NEG, RESIDUAL, SKIP_ZP, SKIP_BITS, SKIP_SIGNED, SKIP_FOLDS, MN_FOLD, SM_FOLD,
//           TWO_STEP, MID_*, HAS_MID_NEG, HAS_POST_BIAS, POST_BIAS_BITS, M1_FOLD, MN1_FOLD, B2_FOLD
//           and the types in_beat_t, out_beat_t, skip_beat_t, w_t, bias_t, mult_t, skip_mult_t,
//           shift_t, mid_mult_t, mid_shift_t, post_bias_t (and hand_t with RQ < PE: the hand-off beat).
#ifndef HLSGEN_MVU_H
#define HLSGEN_MVU_H

#include "epilogue.h"
#include "hlsgen_common.h"

namespace hlsgen {

// Two products w0*x and w1*x from one multiplier (WP486). Requires |w*x| < 2^17 (C::PACK).
template <int W_BITS, class X>
void packed_products(const ap_int<W_BITS>& w0, const ap_int<W_BITS>& w1, const X& x, ap_int<18>& p0,
                     ap_int<W_BITS + X::width + 1>& p1) {
#pragma HLS INLINE
    const ap_int<27> wp = ap_int<27>(w0) + (ap_int<27>(w1) << 18);  // the DSP pre-adder
#if defined(__SYNTHESIS__) || defined(HLSGEN_EXACT_ROM)
    const ap_int<28 + X::width> prod = wp * x;  // one 27 x 18 multiply
#else
    // the same integer; plain C simulation multiplies in 64 bits (ap_int's wide temporary is slow in
    // g++); -DHLSGEN_EXACT_ROM (the synthesis view, tested) multiplies the ap_ints as above
    const ap_int<28 + X::width> prod = (long long)wp.to_int64() * (long long)x.to_int64();
#endif
    p0 = prod.range(17, 0);                                             // sign-extended low field
    p1 = (prod >> 18) + ap_int<2>(prod[17] ? 1 : 0);                    // the borrow of a negative low field
}

// The accumulators of one step: lane p adds SIMD products (its weights, the step's activations).
template <class C>
void mac_step(ap_int<C::ACC_BITS> a[C::PE], const typename code_type<C::IN_BITS, C::IN_SIGNED>::t xv[C::CIN],
              const typename C::w_t W[C::PE][C::WORDS * C::SIMD], int wbase, int obase, int kbase) {
#pragma HLS INLINE
    typedef typename code_type<C::IN_BITS, C::IN_SIGNED>::t x_t;
LANE_PE:
    for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
    LANE_SIMD:
        for (int s = 0; s < C::SIMD; s++) {
#pragma HLS UNROLL
            const ap_int<C::W_BITS> w = W[p][wbase + s];
            if (C::GROUPS == 1) {
                const int k = kbase + s;
                const x_t x = k < C::CIN ? xv[k] : x_t(0);  // beyond CIN: a zero-padded input fold
                if (C::PACK && p % 2 == 1) continue;  // computed with lane p - 1
                if (C::PACK && p + 1 < C::PE) {
                    const ap_int<C::W_BITS> w1 = W[p + 1][wbase + s];
                    ap_int<18> p0;
                    ap_int<C::W_BITS + x_t::width + 1> p1;
                    packed_products<C::W_BITS>(w, w1, x, p0, p1);
                    a[p] += p0;
                    a[p + 1] += p1;
                } else {
                    a[p] += x * w;
                }
            } else {
                // grouped / depthwise: lane p reads its own group (division by a constant only)
                const int group = (obase + p) / C::COUT_G;  // >= GROUPS only in padding lanes
                const int k = kbase + s;
                if (k < C::CIN_G && group < C::GROUPS) {
                    a[p] += xv[group * C::CIN_G + k] * w;
                }
            }
        }
    }
}

// The flattened MVU loop. O is out_beat_t (RQ == PE: the epilogue in the pipeline) or hand_t (RQ < PE:
// each fold's PE accumulators go to mvu_requant, lane p in bits [p*LB, p*LB + ACC_BITS) with its skip
// code above them, LB = ACC_BITS (+ SKIP_BITS with a residual); the requant tables are not read).
template <class C, class O>
void mvu_core(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::skip_beat_t>& skip,
              hls::stream<O>& out, const typename C::w_t W[C::PE][C::WORDS * C::SIMD],
              const typename C::bias_t B[C::FOLD_O][C::PE], const typename C::mult_t M[C::RQ_FOLD][C::RQ],
              const typename C::mult_t MN[C::MN_FOLD][C::RQ], const typename C::skip_mult_t SM[C::SM_FOLD][C::RQ],
              const typename C::shift_t S[C::RQ_FOLD][C::RQ], const typename C::mid_mult_t M1[C::M1_FOLD][C::RQ],
              const typename C::mid_mult_t MN1[C::MN1_FOLD][C::RQ], const typename C::mid_shift_t S1[C::M1_FOLD][C::RQ],
              const typename C::post_bias_t B2[C::B2_FOLD][C::RQ]) {
#pragma HLS INLINE
    typedef typename C::in_beat_t in_beat_t;
    typedef typename code_type<C::IN_BITS, C::IN_SIGNED>::t x_t;
    typedef typename code_type<C::SKIP_BITS, C::SKIP_SIGNED>::t skip_t;
    static const int Y_BITS = C::OUT_GROUP * C::PE * C::OUT_BITS;  // one output beat: OUT_GROUP folds
    static const int O_BITS = C::out_beat_t::width < Y_BITS ? C::out_beat_t::width : Y_BITS;
    static const int SK_BITS = C::skip_beat_t::width;
    static const int TOTAL = C::OUT_PIXELS * C::FOLD_O * C::TAPS * C::FOLD_I;
    static const bool SHARED = C::RQ < C::PE;
    static const int LB = C::ACC_BITS + (C::RESIDUAL ? C::SKIP_BITS : 0);
    static const bool FOLDED = C::IN_FOLD < C::CIN;  // the input streams SIMD channels a beat
    // a depthwise conv reading PE channels a beat: the window arrives fold-major (sliding_window.h
    // TAP_FOLDS), so step (nf, t) reads the beat of fold nf at tap t
    static const bool DW_FOLDED = FOLDED && C::GROUPS == C::COUT && C::CIN_G == 1;
    static_assert(!FOLDED || (DW_FOLDED && C::IN_FOLD == C::PE) || (C::IN_FOLD == C::SIMD && C::GROUPS == 1),
                  "a folded input brings one SIMD slice (or, depthwise, one PE fold) a beat");

    x_t window[C::TAPS][C::CIN];  // the current pixel's taps (codes), kept for the output folds nf > 0
#pragma HLS ARRAY_PARTITION variable=window complete dim=2
    x_t xv[C::CIN];               // the current tap's codes
#pragma HLS ARRAY_PARTITION variable=xv complete
    ap_int<C::ACC_BITS> acc[C::PE];
#pragma HLS ARRAY_PARTITION variable=acc complete
    typename C::skip_beat_t sk = 0;       // the pixel's skip beat, shifted by PE channels per fold
    ap_uint<Y_BITS> y = 0;                // output codes, shifted in PE channels per fold
    int nf = 0, t = 0, sf = 0;            // fold counters (wrap)
    int g = 0;                            // the output fold within its beat
    int sg = 0;                           // the output fold within its skip beat
    int wbase = 0, obase = 0, kbase = 0;  // W column of the word, first lane's channel, k of s = 0
STEP:
    for (int i = 0; i < TOTAL; i++) {
#pragma HLS PIPELINE II=1
        const bool first = t == 0 && sf == 0;
        const bool last = t == C::TAPS - 1 && sf == C::FOLD_I - 1;
        if (DW_FOLDED) {  // every step: the PE channels of fold nf at tap t
            const in_beat_t beat = in.read();
        LANES:
            for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
                if (obase + p < C::CIN) xv[obase + p] = channel_code<C::IN_BITS, C::IN_SIGNED>(beat, p);
            }
        } else if (FOLDED && nf == 0) {  // a folded input: this step's SIMD codes are the next beat
            const in_beat_t beat = in.read();
        SLICE:
            for (int s = 0; s < C::SIMD; s++) {
#pragma HLS UNROLL
                const int c = kbase + s;
                if (c < C::CIN) {
                    xv[c] = channel_code<C::IN_BITS, C::IN_SIGNED>(beat, s);
                    if (C::FOLD_O > 1) window[t][c] = xv[c];
                }
            }
        } else if (!FOLDED && sf == 0 && nf == 0) {  // a new tap: unpack the beat once, keep it for later folds
            const in_beat_t beat = in.read();
        UNPACK:
            for (int c = 0; c < C::CIN; c++) {
#pragma HLS UNROLL
                xv[c] = channel_code<C::IN_BITS, C::IN_SIGNED>(beat, c);
                if (C::FOLD_O > 1) window[t][c] = xv[c];  // no window storage when one fold covers COUT
            }
        } else if (C::FOLD_O > 1 && sf == 0) {
        RELOAD:
            for (int c = 0; c < C::CIN; c++) {
#pragma HLS UNROLL
                xv[c] = window[t][c];
            }
        }
        if (C::RESIDUAL && sg == 0 && first) sk = skip.read();
        ap_int<C::ACC_BITS> a[C::PE];
#pragma HLS ARRAY_PARTITION variable=a complete
    INIT:
        for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
            a[p] = first ? ap_int<C::ACC_BITS>(B[nf][p]) : acc[p];
        }
        mac_step<C>(a, xv, W, wbase, obase, kbase);
        O hand = 0;
    EPILOGUE:
        for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
            acc[p] = a[p];
            if (SHARED) {
                hand.range(p * LB + C::ACC_BITS - 1, p * LB) = a[p];
                if (C::RESIDUAL) {
                    hand.range(p * LB + LB - 1, p * LB + C::ACC_BITS) =
                        sk.range(p * C::SKIP_BITS + C::SKIP_BITS - 1, p * C::SKIP_BITS);
                }
            } else if (last) {
                const int f1 = C::TWO_STEP ? nf : 0;
                const skip_t s_code = C::RESIDUAL ? channel_code<C::SKIP_BITS, C::SKIP_SIGNED>(sk, p) : skip_t(0);
                ap_uint<C::OUT_BITS> code = 0;
                if (obase + p < C::COUT) {
                    code = epilogue_lane<C>(a[p], s_code, M[nf][p], MN[C::HAS_MULT_NEG ? nf : 0][p],
                                            SM[C::RESIDUAL ? nf : 0][p], S[nf][p], M1[f1][p],
                                            MN1[C::HAS_MID_NEG ? nf : 0][p], S1[f1][p],
                                            B2[C::HAS_POST_BIAS ? nf : 0][p]);
                }
                y.range(Y_BITS - (C::PE - p - 1) * C::OUT_BITS - 1, Y_BITS - (C::PE - p) * C::OUT_BITS) = code;
            }
        }
        if (last) {
            if (SHARED) out.write(hand);
            if (C::RESIDUAL && SK_BITS > C::PE * C::SKIP_BITS) sk = sk >> (C::PE * C::SKIP_BITS);
            if (C::RESIDUAL) sg = (sg == C::SKIP_FOLDS - 1 || nf == C::FOLD_O - 1) ? 0 : sg + 1;
            if (!SHARED && g == C::OUT_GROUP - 1) {
                typename C::out_beat_t o = 0;
                o.range(O_BITS - 1, 0) = y.range(O_BITS - 1, 0);
                out.write(o);
            }
            if (!SHARED) step<C::OUT_GROUP>(g);
            if (C::OUT_GROUP > 1) y = y >> (C::PE * C::OUT_BITS);
        }
        // counters: sf, then t, then nf wrap; the word counter follows (nf, t, sf)
        if (wbase == (C::WORDS - 1) * C::SIMD) {
            wbase = 0;
        } else {
            wbase += C::SIMD;
        }
        if (step<C::FOLD_I>(sf)) {
            kbase = 0;
            if (step<C::TAPS>(t)) {
                if (step<C::FOLD_O>(nf)) {
                    obase = 0;
                } else {
                    obase += C::PE;
                }
            }
        } else {
            kbase += C::SIMD;
        }
    }
}

// RQ requant units over the hand-off beats of mvu_core: per fold PE/RQ cycles, unit r of sub-step q
// of fold nf takes channel nf*PE + q*RQ + r = f*RQ + r (f = nf*PE/RQ + q, the row of the tables).
template <class C>
void mvu_requant(hls::stream<typename C::hand_t>& hand, hls::stream<typename C::out_beat_t>& out,
                 const typename C::mult_t M[C::RQ_FOLD][C::RQ], const typename C::mult_t MN[C::MN_FOLD][C::RQ],
                 const typename C::skip_mult_t SM[C::SM_FOLD][C::RQ], const typename C::shift_t S[C::RQ_FOLD][C::RQ],
                 const typename C::mid_mult_t M1[C::M1_FOLD][C::RQ],
                 const typename C::mid_mult_t MN1[C::MN1_FOLD][C::RQ],
                 const typename C::mid_shift_t S1[C::M1_FOLD][C::RQ],
                 const typename C::post_bias_t B2[C::B2_FOLD][C::RQ]) {
    typedef typename code_type<C::SKIP_BITS, C::SKIP_SIGNED>::t skip_t;
    static const int QF = C::PE / C::RQ;
    static const int LB = C::ACC_BITS + (C::RESIDUAL ? C::SKIP_BITS : 0);
    typename C::hand_t held = 0;  // the fold's lanes not yet requantized, lowest first
    FoldedBeat<C, C::RQ_FOLD, C::RQ, C::OUT_GROUP> beat;
    int f = 0, q = 0, cbase = 0;
REQUANT:
    for (int i = 0; i < C::OUT_PIXELS * C::RQ_FOLD; i++) {
#pragma HLS PIPELINE II=1
        const typename C::hand_t cur = q == 0 ? hand.read() : held;
    UNIT:
        for (int r = 0; r < C::RQ; r++) {
#pragma HLS UNROLL
            ap_int<C::ACC_BITS> a;
            a.range(C::ACC_BITS - 1, 0) = cur.range(r * LB + C::ACC_BITS - 1, r * LB);
            skip_t s_code = 0;
            if (C::RESIDUAL) s_code.range(C::SKIP_BITS - 1, 0) = cur.range(r * LB + LB - 1, r * LB + C::ACC_BITS);
            const int f1 = C::TWO_STEP ? f : 0;
            ap_uint<C::OUT_BITS> code = 0;
            if (cbase + r < C::COUT) {
                code = epilogue_lane<C>(a, s_code, M[f][r], MN[C::HAS_MULT_NEG ? f : 0][r], SM[C::RESIDUAL ? f : 0][r],
                                        S[f][r], M1[f1][r], MN1[C::HAS_MID_NEG ? f : 0][r], S1[f1][r],
                                        B2[C::HAS_POST_BIAS ? f : 0][r]);
            }
            beat.put(r, code);
        }
        held = cur >> (C::RQ * LB);
        step<QF>(q);
        beat.next(f, cbase, out);
    }
}

// A matrix-vector layer with time-shared requant units (RQ < PE): the MVU loop and mvu_requant as
// two dataflow processes joined by the hand-off stream; mvu_shared (no residual) passes `in` as the
// skip stream, which is never read (as in conv_mvu).
template <class C>
void mvu_shared_residual(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::skip_beat_t>& skip,
                hls::stream<typename C::out_beat_t>& out, const typename C::w_t W[C::PE][C::WORDS * C::SIMD],
                const typename C::bias_t B[C::FOLD_O][C::PE], const typename C::mult_t M[C::RQ_FOLD][C::RQ],
                const typename C::mult_t MN[C::MN_FOLD][C::RQ], const typename C::skip_mult_t SM[C::SM_FOLD][C::RQ],
                const typename C::shift_t S[C::RQ_FOLD][C::RQ], const typename C::mid_mult_t M1[C::M1_FOLD][C::RQ],
                const typename C::mid_mult_t MN1[C::MN1_FOLD][C::RQ],
                const typename C::mid_shift_t S1[C::M1_FOLD][C::RQ], const typename C::post_bias_t B2[C::B2_FOLD][C::RQ]) {
#pragma HLS DATAFLOW
    static_assert(C::RQ < C::PE && C::PE % C::RQ == 0, "time-shared requant units: RQ divides PE");
    hls::stream<typename C::hand_t> hand("hand");
#pragma HLS STREAM variable=hand depth=2
    mvu_core<C>(in, skip, hand, W, B, M, MN, SM, S, M1, MN1, S1, B2);
    mvu_requant<C>(hand, out, M, MN, SM, S, M1, MN1, S1, B2);
}

template <class C>
void mvu_shared(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
                const typename C::w_t W[C::PE][C::WORDS * C::SIMD], const typename C::bias_t B[C::FOLD_O][C::PE],
                const typename C::mult_t M[C::RQ_FOLD][C::RQ], const typename C::mult_t MN[C::MN_FOLD][C::RQ],
                const typename C::shift_t S[C::RQ_FOLD][C::RQ], const typename C::mid_mult_t M1[C::M1_FOLD][C::RQ],
                const typename C::mid_mult_t MN1[C::MN1_FOLD][C::RQ],
                const typename C::mid_shift_t S1[C::M1_FOLD][C::RQ], const typename C::post_bias_t B2[C::B2_FOLD][C::RQ]) {
    static_assert(!C::RESIDUAL, "a residual layer calls mvu_shared_residual");
    static const typename C::skip_mult_t SM[1][C::RQ] = {};
    mvu_shared_residual<C>(in, in, out, W, B, M, MN, SM, S, M1, MN1, S1, B2);
}

// Conv (after a sliding-window generator, or directly on the input for a 1x1 stride-1 conv).
template <class C>
void conv_mvu(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
              const typename C::w_t W[C::PE][C::WORDS * C::SIMD], const typename C::bias_t B[C::FOLD_O][C::PE],
              const typename C::mult_t M[C::RQ_FOLD][C::RQ], const typename C::mult_t MN[C::MN_FOLD][C::RQ],
              const typename C::shift_t S[C::RQ_FOLD][C::RQ], const typename C::mid_mult_t M1[C::M1_FOLD][C::RQ],
              const typename C::mid_mult_t MN1[C::MN1_FOLD][C::RQ], const typename C::mid_shift_t S1[C::M1_FOLD][C::RQ],
              const typename C::post_bias_t B2[C::B2_FOLD][C::RQ]) {
    static_assert(!C::RESIDUAL, "a residual layer calls conv_mvu_residual");
    static const typename C::skip_mult_t SM[1][C::RQ] = {};
    // without a residual, skip_beat_t is in_beat_t and `in` stands in for the skip stream: its
    // read is behind `C::RESIDUAL` (a compile-time 0), so no stream is declared for nothing
    mvu_core<C>(in, in, out, W, B, M, MN, SM, S, M1, MN1, S1, B2);
}

// Conv whose epilogue adds a residual branch, read beat by beat from `skip`.
template <class C>
void conv_mvu_residual(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::skip_beat_t>& skip,
                       hls::stream<typename C::out_beat_t>& out, const typename C::w_t W[C::PE][C::WORDS * C::SIMD],
                       const typename C::bias_t B[C::FOLD_O][C::PE], const typename C::mult_t M[C::RQ_FOLD][C::RQ],
                       const typename C::mult_t MN[C::MN_FOLD][C::RQ],
                       const typename C::skip_mult_t SM[C::SM_FOLD][C::RQ], const typename C::shift_t S[C::RQ_FOLD][C::RQ],
                       const typename C::mid_mult_t M1[C::M1_FOLD][C::RQ],
                       const typename C::mid_mult_t MN1[C::MN1_FOLD][C::RQ],
                       const typename C::mid_shift_t S1[C::M1_FOLD][C::RQ],
                       const typename C::post_bias_t B2[C::B2_FOLD][C::RQ]) {
    mvu_core<C>(in, skip, out, W, B, M, MN, SM, S, M1, MN1, S1, B2);
}

// Dense (Gemm): the whole input vector, in stream order, is one "window" of TAPS = input pixels;
// the weight columns were permuted into that order by the compiler.
template <class C>
void dense(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
           const typename C::w_t W[C::PE][C::WORDS * C::SIMD], const typename C::bias_t B[C::FOLD_O][C::PE],
           const typename C::mult_t M[C::RQ_FOLD][C::RQ], const typename C::mult_t MN[C::MN_FOLD][C::RQ],
           const typename C::shift_t S[C::RQ_FOLD][C::RQ], const typename C::mid_mult_t M1[C::M1_FOLD][C::RQ],
           const typename C::mid_mult_t MN1[C::MN1_FOLD][C::RQ], const typename C::mid_shift_t S1[C::M1_FOLD][C::RQ],
           const typename C::post_bias_t B2[C::B2_FOLD][C::RQ]) {
    static_assert(C::OUT_PIXELS == 1 && C::GROUPS == 1, "a dense layer makes one pixel, ungrouped");
    conv_mvu<C>(in, out, W, B, M, MN, S, M1, MN1, S1, B2);
}

}  // namespace hlsgen

#endif
