// hg_mvu: matrix-vector unit with its requant epilogue, for conv, depthwise conv and dense layers.
// Input: window taps from hg_window (one input pixel of CIN channels per beat, or with IN_FOLDED its
// SF slices of SIMD channels in SF beats), KK taps per output pixel repeated NF = ceil(COUT/PE) times. Per tap it spends SF = ceil(CIN/GROUP/SIMD) cycles (1 when
// DEPTHWISE), each cycle one PE x SIMD multiply step with weights from a ROM ($readmemh MEM_FILE,
// word (nf*KK + tap)*SF + sf holds lane (pe, s) at bits [(pe*SIMD + s)*WB +: WB]). So an output pixel
// takes NF*KK*SF cycles, back to back. Depthwise: lane pe reads channel nf*PE + pe of the tap.
// Grouped conv (GROUP > 1): lane (pe, s) of output channel o = nf*PE + pe reads input channel
// g*CIN/GROUP + sf*SIMD + s of its own group g = o / (COUT/GROUP).
// Accumulators start at the bias; when an NF group completes, RQ time-shared requant units (hg_requant)
// apply mult/mult_neg/skip/shift/clamp and a collector assembles the COUT channels of one output beat.
// RQ = PE: the PE accumulators go to PE units at once. RQ < PE (RQ divides PE, QF = PE/RQ <= KK*SF):
// the group's accumulators are handed off to a register and shifted out RQ a cycle over QF cycles
// while the next group accumulates; unit r of sub-step q of group nf takes channel nf*PE + q*RQ + r =
// (nf*QF + q)*RQ + r, so the units see a layer of NF*QF groups of RQ lanes (same parameter order).
// A residual skip stream (HAS_SKIP) supplies one pixel per output pixel to the epilogue, or, with SKC <
// COUT (pixels over a beat), SKC channels a beat (a multiple of PE): a beat serves SKQ = SKC/RQ unit
// groups and is taken with the last of them (or the pixel's last group), the lanes picking their
// channel from the beat by the group's slot in it (a counter beside the groups).
// TWO_STEP: each lane first reproduces the model's intermediate quantizer (hg_mvu_lane), RQD more
// stages before the last requant step.
// Pipeline: issue -> ROM/operands -> multiplier operands (two register stages a lane, so that routing to
// a multiplier far from the ROM is split) -> products (two register stages out of the multiplier) ->
// adder tree (TD = tree_depth(SIMD) stages, each summing groups of 4) -> accumulate
// (bias or acc, plus the last <= 2 partial sums) -> (RQ < PE: hold) -> requant (RQD = 7 stages of
// hg_requant, 2*RQD with TWO_STEP) -> output; MD = 4 + TD stages from the ROM word to the accumulator.
// All stages advance together while the output register can move and the skip (if needed) is there.
// PACK (dense conv / gemm, lanes of one step share their activation; chosen by verilog_layers.py):
// lanes 2k and 2k+1 share one multiplier, A = w0 + w1*2^F (F = WB + IB bits per field) times the
// activation as an unsigned IB-bit code xu (signed codes: xu = x + 2^(IB-1), the constant
// -2^(IB-1)*sum(w) is folded into BIAS by the generator); the low F bits are w0*xu, the upper bits
// plus the sign of the low field are w1*xu. One DSP48E1 (25 x 18) holds two int8 x int8 MACs.
// LUTMUL (narrow weights, chosen by verilog_layers.py): each product is a shift-add over the WB weight
// bits (LUTs and carry chains; Yosys maps a plain a * b to a DSP48E1 at any width and ignores use_dsp).
// The accumulator is exactly ACCB bits: the layer's sum fits it, so wrapping partial sums are exact.
module hg_mvu #(
    parameter int CIN = 3, parameter int IB = 8, parameter bit IN_SIGNED = 1'b1,
    parameter int COUT = 4, parameter int PE = 2, parameter int SIMD = 3, parameter int NF = 2, parameter int RQ = PE,
    parameter int KK = 9, parameter bit DEPTHWISE = 1'b0, parameter int GROUP = 1,
    parameter int WB = 8, parameter int ACCB = 20, parameter bit PACK = 1'b0, parameter bit LUTMUL = 1'b0,
    parameter MUL_PRIM = "",  // hg_mul's PRIM: the DSP block the products use with its own registers
    parameter MEM_FILE = "",
    parameter int OB = 8, parameter int MB = 16, parameter int SHB = 6, parameter int MAX_SHIFT = 40,
    parameter int MIN_SHIFT = 0,
    parameter bit HAS_NEG = 1'b0, parameter bit HAS_SKIP = 1'b0,
    parameter int SKB = 8, parameter bit SKIP_SIGNED = 1'b1, parameter int SMB = 16, parameter int SKC = COUT,
    parameter bit ROUND_UP = 1'b0, parameter int ZP = 0, parameter int LO = -128, parameter int HI = 127,
    // the '0 defaults of tables a layer does not pass (SKIP_MULT without a skip) replicate NF*PE*width
    // zero bits, over Verilator's 8,192 replication limit on wide layers (640 channels x 16 bits)
    /* verilator lint_off WIDTHCONCAT */
    parameter logic [NF*PE*ACCB-1:0] BIAS = '0,
    parameter logic [NF*PE*MB-1:0] MULT = '0,
    parameter logic [NF*PE*MB-1:0] MULT_NEG = '0,
    parameter logic [NF*PE*SHB-1:0] SHIFT = '0,
    parameter logic [NF*PE*SMB-1:0] SKIP_MULT = '0,
    parameter logic [NF*PE*(SKB+1)-1:0] SKIP_ZP = '0,
    /* verilator lint_on WIDTHCONCAT */
    parameter bit TWO_STEP = 1'b0, parameter int MB1 = 2, parameter int SHB1 = 1, parameter int MAX_SHIFT1 = 0,
    parameter int MIN_SHIFT1 = 0,
    parameter bit HAS_NEG1 = 1'b0, parameter int MID_ZP = 0, parameter int MID_LO = 0, parameter int MID_HI = 0,
    parameter int MXB = 2, parameter int TB1 = 3, parameter bit HAS_PB = 1'b0, parameter int PBB = 2,
    parameter logic [NF*PE*MB1-1:0] MULT1 = '0,
    parameter logic [NF*PE*MB1-1:0] MULT1_NEG = '0,
    parameter logic [NF*PE*SHB1-1:0] SHIFT1 = '0,
    parameter logic [NF*PE*PBB-1:0] POST_BIAS = '0,
    // the output stream: OBG groups of RQ channels a beat (OBG = NF*PE/RQ: the whole pixel), OUTW bits
    parameter int OBG = NF * (PE / RQ), parameter int OUTW = COUT * OB,
    // IN_FOLDED: the taps arrive SIMD channels a beat, SF beats a tap, one a step (dense conv / gemm), or
    // PE channels a beat, one fold of the window a repeat (depthwise: hg_window REP_STEP 1)
    parameter bit IN_FOLDED = 1'b0, parameter int INW = IN_FOLDED ? (DEPTHWISE ? PE : SIMD) * IB : CIN * IB
) (
    input  logic                clk,
    input  logic                rst_n,
    input  logic [INW-1:0]      in_data,
    input  logic                in_valid,
    output logic                in_ready,
    input  logic [SKC*SKB-1:0]  skip_data,
    input  logic                skip_valid,
    output logic                skip_ready,
    output logic [OUTW-1:0]     out_data,
    output logic                out_valid,
    input  logic                out_ready
);
    localparam int CING = CIN / GROUP, COUTG = COUT / GROUP;  // channels per group
    localparam int SF = DEPTHWISE ? 1 : (CING + SIMD - 1) / SIMD;
    localparam int XB = (IN_SIGNED && !PACK) ? IB : IB + 1;  // operand: signed code, or unsigned code + 0
    localparam int PB = IB + WB;                 // one product w*x (or w*xu) fits PB bits
    localparam int F = PB;                       // PACK: bits of the low field
    localparam int AW = WB + 1 + F;              // PACK: multiplier operand A = w0 + w1*2^F
    localparam int PW = AW + XB;                 // PACK: the double product
    localparam int NP = PACK ? PE / 2 : 0;       // multiplier pairs
    localparam int PX = PB > ACCB ? PB : ACCB;
    localparam int AB = ACCB;
    localparam int WORDS = NF * KK * SF;
    localparam int RAB = WORDS > 1 ? $clog2(WORDS) : 1;  // ROM address bits (depth exactly WORDS)
    localparam int SFB = $clog2(SF + 1), TB = $clog2(KK + 1), NB = $clog2(NF + 1);
    localparam int LSF = SF - 1, LKK = KK - 1, LNF = NF - 1, LWORD = WORDS - 1;
    localparam logic [IB-1:0] XFLIP = (PACK && IN_SIGNED) ? {1'b1, {(IB-1){1'b0}}} : '0;
    localparam int QF = PE / RQ, NFQ = NF * QF;  // requant sub-steps per group; groups seen by the units
    localparam int QB = $clog2(QF + 1), NQB = $clog2(NFQ + 1), LQF = QF - 1, LNFQ = NFQ - 1;
    localparam int RQD = 7;                      // hg_requant's DEPTH
    localparam int LD = TWO_STEP ? 2 * RQD : RQD;  // the lanes' latency
    // the adder tree: stage d (1..TD) holds NW(d) = ceil(SIMD / 4^d) partial sums a lane, stage TD <= 2
    // (TD = 0: the accumulate stage adds the SIMD <= 2 products itself)
    function int tree_depth(input int n);
        tree_depth = 0;
        for (int k = 0; k < 15; k++) if (n > 2 * (1 << (2 * k))) tree_depth = k + 1;
    endfunction
    function int tree_width(input int d);
        tree_width = (SIMD + (1 << (2 * d)) - 1) >> (2 * d);
    endfunction
    localparam int TD = tree_depth(SIMD);
    localparam int TDM = TD > 0 ? TD : 1, NS = (SIMD + 3) / 4;  // array sizes (TD = 0: unused)
    localparam int NLAST = tree_width(TD);  // partial sums into the accumulate stage (1 or 2)
    localparam int MD = 4 + TD;  // stages from the ROM word / operands (stage 1) to the accumulate stage


    logic en, skip_stall, fire0;
    logic [SFB-1:0] sf;
    logic [TB-1:0] tap;
    logic [NB-1:0] nf, nf1, nf2, nf3;
    logic [NQB-1:0] nfq, nf_out;  // the units' group index (nf*QF + sub-step)
    logic vq;                                           // the units take an input this cycle
    logic signed [AB-1:0] xq [0:RQ-1];                  // ... the accumulators they take
    logic [RAB-1:0] ra;
    logic v1, v2, v3, v_out, first1, first2, last1, last2;  // stage 1, and the accumulate stage (2)
    // SHARED (dense conv / gemm): every PE lane of a step reads the same SIMD input channels, so the
    // operands are selected and registered once per SIMD lane; else one operand per (pe, s) lane
    localparam bit SHARED = !DEPTHWISE && GROUP == 1;
    localparam int NX = SHARED ? SIMD : PE * SIMD;
    logic signed [XB-1:0] x0 [0:NX-1];
    logic signed [XB-1:0] x1 [0:NX-1];   // lane i reads x1[SHARED ? i % SIMD : i]
    logic [PE*SIMD*WB-1:0] w1;
    logic [PE*SIMD*PB-1:0] prod2;                   // one product per lane (unpaired lanes), PB bits each
    logic signed [PB-1:0] prodq [0:PE*SIMD-1];     // ... registered again
    logic signed [PW-1:0] ppq [0:(NP > 0 ? NP : 1)*SIMD-1];  // PACK: one double product per pair (g_pack.pp2, again)
    logic signed [AB-1:0] acc [0:PE-1];
    logic [RQ*OB-1:0] y5;
    logic [ACCB-1:0] bias [0:PE-1];  // the bias of channel nf2*PE + p (a ROM per lane, hg_table)
    for (genvar p = 0; p < PE; p++) begin : g_bias
        hg_table #(.N(NF), .W(ACCB), .IW(NB), .STRIDE(PE), .FIRST(p), .COUNT(NF * PE), .VALUES(BIAS))
            u_bias (.idx(nf2), .value(bias[p]));
    end

    assign skip_stall = HAS_SKIP && vq && !skip_valid;
    assign en = (!out_valid || out_ready) && !skip_stall;
    assign fire0 = in_valid && en;
    assign in_ready = en && (IN_FOLDED || sf == LSF[SFB-1:0]);
    // the skip beat's slot: the unit group's index within it (SKQ groups a beat; the whole pixel: nfq)
    localparam bit SK_FOLDED = SKC < COUT;
    localparam int SKQ = SK_FOLDED ? SKC / RQ : NFQ, LSKQ = SKQ - 1;
    logic [NQB-1:0] sk_slot;
    if (SK_FOLDED) begin : g_sk_slot
        logic [NQB-1:0] slot;
        always_ff @(posedge clk) begin
            if (!rst_n) slot <= '0;
            else if (en && vq) slot <= (slot == LSKQ[NQB-1:0] || nfq == LNFQ[NQB-1:0]) ? '0 : slot + 1'b1;
        end
        assign sk_slot = slot;
        assign skip_ready = HAS_SKIP && en && vq && (slot == LSKQ[NQB-1:0] || nfq == LNFQ[NQB-1:0]);
    end else begin : g_sk_pixel
        assign sk_slot = nfq;
        assign skip_ready = HAS_SKIP && en && vq && nfq == LNFQ[NQB-1:0];
    end

    // stage 0: operand selection (conv: SIMD slice sf of the tap, within the group of the lane's output
    // channel och = nf*PE+pe; depthwise: channel och). PACK: the unsigned code xu.
    // Dense: one slice per step, chosen from the SF slices by constant part-selects (no run-time index
    // into the wide beat); channels beyond CIN (SIMD does not divide it) are 0.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [IB:0] xe;  // the code, sign- or zero-extended (the top bit unused when XB = IB)
    /* verilator lint_on UNUSEDSIGNAL */
    if (SHARED) begin : g_xshared
        localparam int XW = (IN_FOLDED ? 1 : SF) * SIMD * IB;  // the beat, zero-padded to whole slices
        logic [XW-1:0] xpad;
        if (XW > INW) begin : g_pad
            assign xpad = {{(XW - INW){1'b0}}, in_data};
        end else begin : g_nopad
            assign xpad = in_data;
        end
        logic [SIMD*IB-1:0] slice;
        if (SF == 1 || IN_FOLDED) begin : g_one  // the beat is the step's slice
            assign slice = xpad;
        end else begin : g_many
            always_comb begin
                slice = '0;
                for (int k = 0; k < SF; k++)
                    if ({{(32 - SFB){1'b0}}, sf} == k) slice = xpad[k * SIMD * IB +: SIMD * IB];
            end
        end
        always_comb begin
            for (int js = 0; js < SIMD; js++) begin
                xe = {(IN_SIGNED && !PACK) ? slice[js * IB + IB - 1] : 1'b0, slice[js * IB +: IB] ^ XFLIP};
                x0[js] = xe[XB-1:0];
                if (SF * SIMD > CING && js >= CING - (SF - 1) * SIMD && {{(32 - SFB){1'b0}}, sf} == SF - 1)
                    x0[js] = '0;  // a padding channel of the last slice (its weight is 0 as well)
            end
        end
    end else begin : g_xlane
        int csel, och, cg;
        always_comb begin
            for (int i = 0; i < PE * SIMD; i++) begin
                och = {{(32 - NB){1'b0}}, nf} * PE + i / SIMD;
                cg = {{(32 - SFB){1'b0}}, sf} * SIMD + i % SIMD;
                // depthwise: channel och of the pixel, or lane i of a beat of PE channels (IN_FOLDED)
                csel = DEPTHWISE ? (IN_FOLDED ? i / SIMD : och) : (GROUP > 1 ? (och / COUTG) * CING + cg : cg);
                x0[i] = '0;
                xe = '0;
                if (DEPTHWISE ? (och < CIN && i % SIMD == 0) : (cg < CING && (GROUP == 1 || och < COUT))) begin
                    xe = {(IN_SIGNED && !PACK) ? in_data[csel * IB + IB - 1] : 1'b0, in_data[csel * IB +: IB] ^ XFLIP};
                    x0[i] = xe[XB-1:0];
                end
            end
        end
    end

    // stage 1: operands with the ROM word; stage M: each multiplier's operands registered again, one
    // register per lane (placed beside its multiplier: the ROM word and the shared operand x1 fan out
    // over the whole device); stage P: the products
    logic signed [WB-1:0] wl [0:PE*SIMD-1];
    always_comb begin
        for (int i = 2 * NP * SIMD; i < PE * SIMD; i++) wl[i] = w1[i * WB +: WB];  // the unpaired lanes
    end
    /* verilator lint_off UNUSEDSIGNAL */
    logic signed [WB-1:0] wm [0:PE*SIMD-1];  // unused where every lane is paired (PACK)
    logic signed [XB-1:0] xm [0:PE*SIMD-1];
    /* verilator lint_on UNUSEDSIGNAL */

    // stages M2 and P of each unpaired lane: hg_mul (the family's DSP block with its own registers where
    // MUL_PRIM names one), or LUTMUL: w*x = sum of x*2^b over the weight's bits b (the sign bit subtracts)
    for (genvar i = 0; i < 2 * NP * SIMD; i++) begin : g_paired
        assign prod2[i * PB +: PB] = '0;  // a pair's lanes multiply in g_pack
    end
    for (genvar i = 2 * NP * SIMD; i < PE * SIMD; i++) begin : g_product
        if (LUTMUL) begin : g_lut
            logic signed [WB-1:0] wn;  // the second operand stage
            logic signed [XB-1:0] xn;
            logic signed [PB-1:0] pm, xs, pr;
            always_comb begin
                xs = {{(PB - XB){xn[XB-1]}}, xn};
                pm = '0;
                for (int b = 0; b < WB; b++) begin
                    if (wn[b]) pm = (b == WB - 1) ? pm - (xs <<< b) : pm + (xs <<< b);
                end
            end
            always_ff @(posedge clk) begin
                if (en) begin
                    wn <= wm[i];
                    xn <= xm[i];
                    pr <= pm;
                end
            end
            assign prod2[i * PB +: PB] = pr;
        end else begin : g_dsp
            hg_mul #(.AW(WB), .BW(XB), .PW(PB), .PRIM(MUL_PRIM)) u_mul (
                .clk(clk), .en(en), .a(wm[i]), .b(xm[i]), .p(prod2[i * PB +: PB])
            );
        end
    end

    always_ff @(posedge clk) begin
        if (en) begin
            for (int i = 0; i < NX; i++) x1[i] <= x0[i];
            first1 <= tap == '0 && sf == '0;
            last1 <= tap == LKK[TB-1:0] && sf == LSF[SFB-1:0];
            nf1 <= nf;
            for (int i = 2 * NP * SIMD; i < PE * SIMD; i++) begin
                wm[i] <= wl[i];
                xm[i] <= x1[SHARED ? i % SIMD : i];
                prodq[i] <= prod2[i * PB +: PB];
            end
            nf3 <= nf2;
        end
    end
    // the control beside the data: MD stages from stage 1 to the accumulate stage
    hg_delay #(.W(3 + NB), .D(MD), .RESET(1'b1)) u_ctl (
        .clk(clk), .rst_n(rst_n), .en(en), .d({v1, first1, last1, nf1}), .q({v2, first2, last2, nf2})
    );

    // the weight ROM, read in stage 1: block RAM when deep; when shallow the synthesis tool picks (Yosys:
    // LUTs; rom_style "distributed" has no ROM mapping in Yosys 0.70 and fails)
    if (WORDS > 128) begin : g_brom
        (* rom_style = "block" *) logic [PE*SIMD*WB-1:0] rom [0:WORDS-1];
        initial if (MEM_FILE != "") $readmemh(MEM_FILE, rom);
        always_ff @(posedge clk) if (en) w1 <= rom[ra];
    end else begin : g_drom
        logic [PE*SIMD*WB-1:0] rom [0:WORDS-1];
        initial if (MEM_FILE != "") $readmemh(MEM_FILE, rom);
        always_ff @(posedge clk) if (en) w1 <= rom[ra];
    end

    if (NP > 0) begin : g_pack
        // A = {w1 - sign(w0), w0 as F bits} = w0 + w1*2^F; the pair shares activation s (lanes 2k*SIMD+s)
        logic signed [AW-1:0] aop [0:NP*SIMD-1];
        logic [WB-1:0] wa, wb;  // the pair's weights (lanes 2k*SIMD+s and (2k+1)*SIMD+s)
        always_comb begin
            for (int k = 0; k < NP; k++) begin
                for (int s = 0; s < SIMD; s++) begin
                    wa = w1[(2 * k * SIMD + s) * WB +: WB];
                    wb = w1[((2 * k + 1) * SIMD + s) * WB +: WB];
                    aop[k * SIMD + s] = {{wb[WB-1], wb} - {{WB{1'b0}}, wa[WB-1]}, {(F - WB){wa[WB-1]}}, wa};
                end
            end
        end
        logic signed [AW-1:0] am [0:NP*SIMD-1];
        logic signed [XB-1:0] xpm [0:NP*SIMD-1];
        logic signed [AW-1:0] an [0:NP*SIMD-1];
        logic signed [PW-1:0] pp2 [0:NP*SIMD-1];
        logic signed [XB-1:0] xpn [0:NP*SIMD-1];
        always_ff @(posedge clk) begin
            if (en) begin
                for (int js = 0; js < NP * SIMD; js++) begin
                    am[js] <= aop[js];
                    xpm[js] <= x1[js % SIMD];  // PACK implies SHARED
                    an[js] <= am[js];
                    xpn[js] <= xpm[js];
                    pp2[js] <= an[js] * xpn[js];
                    ppq[js] <= pp2[js];
                end
            end
        end
    end else begin : g_nopack
        always_comb ppq[0] = '0;
    end

    // the lane products as ACCB-bit terms (modulo 2^ACCB); a pair's double product splits into the low
    // field w0*xu (lane 2k) and the upper field + the low field's sign w1*xu (lane 2k+1)
    localparam int NPS = NP > 0 ? NP : 1;
    logic signed [AB-1:0] leaf [0:PE*SIMD-1];
    logic signed [PX-1:0] pe_x;
    logic signed [PB-1:0] pl;  // the lane's product
    /* verilator lint_off UNUSEDSIGNAL */
    int j;  // an index: its high bits are zero
    /* verilator lint_on UNUSEDSIGNAL */
    always_comb begin
        for (int p = 0; p < PE; p++) begin
            for (int s = 0; s < SIMD; s++) begin
                j = ((p / 2) % NPS) * SIMD + s;  // PACK: the pair of lanes 2k, 2k+1 that p belongs to
                if (p >= 2 * NP) pl = prodq[p * SIMD + s];
                else if (p % 2 == 0) pl = ppq[j][F-1:0];
                else pl = ppq[j][F +: PB] + {{(PB - 1){1'b0}}, ppq[j][F-1]};
                pe_x = {{(PX - PB + 1){pl[PB-1]}}, pl[PB-2:0]};  // the sum is mod 2^ACCB
                leaf[p * SIMD + s] = pe_x[AB-1:0];
            end
        end
    end

    // stages T1..TD: the adder tree; node i of stage d (lane p) at tr[(p*TDM + d-1)*NS + i] sums nodes
    // 4i..4i+3 of stage d-1 (stage 0: the leaves)
    logic signed [AB-1:0] tr [0:PE*TDM*NS-1];
    logic signed [AB-1:0] tn [0:PE*TDM*NS-1];
    logic signed [AB-1:0] tsum;
    always_comb begin
        for (int k = 0; k < PE * TDM * NS; k++) tn[k] = '0;
        for (int p = 0; p < PE; p++) begin
            for (int d = 1; d <= TD; d++) begin
                for (int i = 0; i < NS; i++) begin
                    tsum = '0;
                    for (int c = 0; c < 4; c++) begin
                        if (i < tree_width(d) && 4 * i + c < tree_width(d - 1))
                            tsum = tsum + (d == 1 ? leaf[p * SIMD + 4 * i + c] : tr[(p * TDM + d - 2) * NS + 4 * i + c]);
                    end
                    tn[(p * TDM + d - 1) * NS + i] = tsum;
                end
            end
        end
    end
    always_ff @(posedge clk) begin
        if (en) begin
            for (int k = 0; k < PE * TDM * NS; k++) tr[k] <= tn[k];
        end
    end

    // the accumulate stage (modulo 2^ACCB): the bias of channel nf2*PE + p starts every group, then the
    // last NLAST partial sums (TD = 0: the SIMD products)
    logic signed [AB-1:0] acc_next [0:PE-1];
    logic signed [AB-1:0] sum;
    always_comb begin
        for (int p = 0; p < PE; p++) begin
            sum = acc[p];
            if (first2) sum = bias[p];
            for (int c = 0; c < NLAST; c++)
                sum = sum + (TD == 0 ? leaf[p * SIMD + c] : tr[(p * TDM + TDM - 1) * NS + c]);
            acc_next[p] = sum;
        end
    end

    always_ff @(posedge clk) begin
        if (en && v2) begin
            for (int p = 0; p < PE; p++) acc[p] <= acc_next[p];
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            {sf, tap, nf} <= '0;
            ra <= '0;
            {v1, v3} <= '0;
        end else if (en) begin
            if (fire0) begin
                ra <= ra == LWORD[RAB-1:0] ? '0 : ra + 1'b1;
                sf <= sf == LSF[SFB-1:0] ? '0 : sf + 1'b1;
                if (sf == LSF[SFB-1:0]) begin
                    tap <= tap == LKK[TB-1:0] ? '0 : tap + 1'b1;
                    if (tap == LKK[TB-1:0]) nf <= nf == LNF[NB-1:0] ? '0 : nf + 1'b1;
                end
            end
            v1 <= fire0;
            v3 <= v2 && last2;
        end
    end

    // v * QF as shift-adds of the constant (g_shared's nf3 * QF): ECP5 synthesis maps any variable
    // product to a MULT18X18D (one per layer whose PE / RQ is not a power of two), and it was the head
    // of the critical path into the requant units
    function int mul_qf(input int v);
        mul_qf = 0;
        for (int b = 0; b < 31; b++) if (((QF >> b) & 1) != 0) mul_qf = mul_qf + (v <<< b);
    endfunction

    // the requant units' input: the group's accumulators at once (RQ = PE), or handed off to `hold`
    // and shifted out RQ a cycle (the next v3 comes KK*SF >= QF enabled cycles later)
    if (QF == 1) begin : g_direct
        always_comb begin
            vq = v3;
            nfq = nf3;
            for (int r = 0; r < RQ; r++) xq[r] = acc[r];
        end
    end else begin : g_shared
        logic signed [AB-1:0] hold [0:PE-1];
        /* verilator lint_off UNUSEDSIGNAL */
        int hbase;  // nf3 * QF, registered (bits above NQB are zero)
        /* verilator lint_on UNUSEDSIGNAL */
        logic [QB-1:0] hq;
        logic hv;
        always_ff @(posedge clk) begin
            if (!rst_n) hv <= 1'b0;
            else if (en) begin
                if (v3) begin
                    hv <= 1'b1;
                    hq <= '0;
                    hbase <= mul_qf({{(32 - NB){1'b0}}, nf3});
                end else if (hv) begin
                    hv <= hq != LQF[QB-1:0];
                    hq <= hq + 1'b1;
                end
            end
            if (en) begin
                if (v3) for (int i = 0; i < PE; i++) hold[i] <= acc[i];
                else for (int i = 0; i < PE - RQ; i++) hold[i] <= hold[i + RQ];
            end
        end
        /* verilator lint_off UNUSEDSIGNAL */
        int hidx;  // bits above NQB are zero
        /* verilator lint_on UNUSEDSIGNAL */
        always_comb begin
            vq = hv;
            hidx = hbase + {{(32 - QB){1'b0}}, hq};
            nfq = hidx[NQB-1:0];
            for (int r = 0; r < RQ; r++) xq[r] = hold[r];
        end
    end

    // the requant units for channels nfq*RQ + r: LD stages
    for (genvar p = 0; p < RQ; p++) begin : g_lane
        hg_mvu_lane #(
            .MUL_PRIM(MUL_PRIM), .AB(AB), .NF(NFQ), .PE(RQ), .LANE(p), .NB(NQB), .COUT(COUT), .OB(OB), .MB(MB), .SHB(SHB),
            .MAX_SHIFT(MAX_SHIFT), .MIN_SHIFT(MIN_SHIFT), .HAS_NEG(HAS_NEG), .HAS_SKIP(HAS_SKIP), .SKB(SKB),
            .SKIP_SIGNED(SKIP_SIGNED), .SMB(SMB), .SKC(SKC), .SKQ(SKQ), .ROUND_UP(ROUND_UP), .ZP(ZP), .LO(LO), .HI(HI),
            .MULT(MULT), .MULT_NEG(MULT_NEG), .SHIFT(SHIFT), .SKIP_MULT(SKIP_MULT), .SKIP_ZP(SKIP_ZP),
            .TWO_STEP(TWO_STEP), .MB1(MB1), .SHB1(SHB1), .MAX_SHIFT1(MAX_SHIFT1), .MIN_SHIFT1(MIN_SHIFT1), .HAS_NEG1(HAS_NEG1),
            .MID_ZP(MID_ZP), .MID_LO(MID_LO), .MID_HI(MID_HI), .MXB(MXB), .TB1(TB1), .HAS_PB(HAS_PB), .PBB(PBB),
            .MULT1(MULT1), .MULT1_NEG(MULT1_NEG), .SHIFT1(SHIFT1), .POST_BIAS(POST_BIAS)
        ) u_lane (
            .clk(clk), .en(en), .nf(nfq), .sk_slot(sk_slot), .acc(xq[p]), .skip_data(skip_data),
            .y(y5[p * OB +: OB])
        );
    end

    // the valid bit and group index beside the lanes' data
    hg_delay #(.W(1 + NQB), .D(LD), .RESET(1'b1)) u_vq (
        .clk(clk), .rst_n(rst_n), .en(en), .d({vq, nfq}), .q({v_out, nf_out})
    );
    // a folded output (OBG < NFQ, NFQ = NF*PE/RQ groups): lanes beyond COUT are zeros, whole padding
    // groups of the last PE fold included
    localparam int REALW = OBG < NFQ ? COUT * OB : NFQ * RQ * OB;
    hg_collect #(.GROUP(RQ * OB), .NF(NFQ), .NB(NQB), .OUTW(OUTW), .BG(OBG), .REALW(REALW)) u_collect (
        .clk(clk), .rst_n(rst_n), .en(en), .in_valid(v_out), .nf(nf_out), .in_data(y5),
        .out_data(out_data), .out_valid(out_valid), .out_ready(out_ready)
    );
endmodule
