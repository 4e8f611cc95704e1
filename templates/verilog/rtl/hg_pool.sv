// hg_pool: max or average pooling over window taps from hg_window (one input pixel of C channels per
// beat, KK taps per output pixel, all C channels in parallel, one tap per cycle).
// Max: integer max of the taps (padding taps hold the lowest code, so they never win).
// Average: s = sum of the taps (padding taps hold x_zp), v = (s - X_OFF[c]) * mult[c] with
// X_OFF[c] = KK*x_zp[c], then the requant of hg_requant: y = clamp(ZP + round_shift(v, shift[c]), LO, HI).
// The sums of all C channels are accumulated per tap (adders only); after the last tap of a window they
// are copied into a held register that PE requant lanes drain, PE channels per cycle (NF = ceil(C/PE)
// cycles, per-channel parameters from small ROMs indexed by the fold), while the next window
// accumulates. The last tap of the next window waits until the drain issues its last fold, so a
// window takes max(KK, NF) cycles.
// Pipeline: accumulate -> (avg: held sums -> drain) -> RQD = 7 requant stages (max: 2 plain registers)
// -> output.
// A fold-major pool (hw/layers/pool.reads_fold_major: pixels wider than a beat) gets FOLDS windows of a
// fold's C channels per output pixel from hg_window; an average pool then writes the padding lanes of
// the last one (channels LAST_C .. C-1) as zero, which would requantize to the zero point.
module hg_pool #(
    parameter int C = 4, parameter int IB = 8, parameter bit IN_SIGNED = 1'b1,
    parameter int KK = 4, parameter bit IS_AVG = 1'b0, parameter int PE = 4,
    parameter int OB = 8, parameter int MB = 16, parameter int SHB = 6, parameter int MAX_SHIFT = 40, parameter int MIN_SHIFT = 0,
    parameter bit ROUND_UP = 1'b0, parameter int ZP = 0, parameter int LO = -128, parameter int HI = 127,
    parameter logic [C*MB-1:0] MULT = '0,
    parameter logic [C*SHB-1:0] SHIFT = '0,
    parameter logic [C*32-1:0] X_OFF = '0,  // KK * x_zp[c], 32-bit two's complement each
    parameter int FOLDS = 1, parameter int LAST_C = C
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [C*IB-1:0]  in_data,
    input  logic             in_valid,
    output logic             in_ready,
    output logic [C*OB-1:0]  out_data,
    output logic             out_valid,
    input  logic             out_ready
);
    localparam int AB = IB + 2 + $clog2(KK + 1);  // sum of KK taps, signed
    localparam int TB = $clog2(KK + 1), LKK = KK - 1;
    localparam int NF = IS_AVG ? (C + PE - 1) / PE : 1, NB = $clog2(NF + 1), LNF = NF - 1;
    localparam int RQD = 7;  // hg_requant's DEPTH

    logic en, fire, last_tap, v_y;
    logic [TB-1:0] tap;
    logic signed [AB-1:0] acc [0:C-1];
    logic [(IS_AVG ? PE : C)*OB-1:0] y3, y_out;
    logic [NB-1:0] nf_y;  // fold of the requantized group reaching the collector

    assign en = !out_valid || out_ready;
    assign last_tap = tap == LKK[TB-1:0];

    // acc_next: the running max or sum with this tap. Only read when a tap fires (the register updates
    // below and the held sums), so a simulator evaluates it only then (an idle pool costs nothing).
    function logic signed [AB-1:0] acc_next(input int c);
        acc_next = {{(AB - IB){(IN_SIGNED ? in_data[c * IB + IB - 1] : 1'b0)}}, in_data[c * IB +: IB]};
        if (tap != '0) begin
            if (IS_AVG) acc_next = acc[c] + acc_next;
            else if (acc[c] > acc_next) acc_next = acc[c];
        end
    endfunction

    always_ff @(posedge clk) begin
        if (fire) begin
            for (int c = 0; c < C; c++) acc[c] <= acc_next(c);
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) tap <= '0;
        else if (fire) tap <= last_tap ? '0 : tap + 1'b1;
    end

    if (IS_AVG) begin : g_avg
        // the held sums of the last window, drained PE channels per cycle (a shift register)
        logic [NF*PE*AB-1:0] held;
        logic busy, drain_last, load;
        logic [NB-1:0] nf;
        assign drain_last = busy && nf == LNF[NB-1:0];
        assign in_ready = en && !(last_tap && busy && !drain_last);
        assign fire = in_valid && in_ready;
        assign load = fire && last_tap;
        always_ff @(posedge clk) begin
            if (!rst_n) begin
                busy <= 1'b0;
                nf <= '0;
            end else if (en) begin
                if (busy) nf <= drain_last ? '0 : nf + 1'b1;
                if (load) busy <= 1'b1;
                else if (drain_last) busy <= 1'b0;
            end
            if (en) begin
                if (load) begin
                    for (int c = 0; c < NF * PE; c++) held[c * AB +: AB] <= c < C ? acc_next(c % C) : '0;
                end else if (busy) held <= held >> (PE * AB);
            end
        end
        // the window fold being drained (fold-major: FOLDS windows a pixel), and its last one's flag
        localparam int WB = FOLDS > 1 ? $clog2(FOLDS) : 1, LWF = FOLDS - 1;
        logic [WB-1:0] wf;
        logic last_wf, last_wf_y;
        assign last_wf = wf == LWF[WB-1:0];
        always_ff @(posedge clk) begin
            if (!rst_n) wf <= '0;
            else if (en && drain_last) wf <= last_wf ? '0 : wf + 1'b1;
        end
        // issue (busy) -> RQD requant stages: the valid bit, fold and last-window flag beside the lanes' data
        hg_delay #(.W(2 + NB), .D(RQD), .RESET(1'b1)) u_v (
            .clk(clk), .rst_n(rst_n), .en(en), .d({busy, nf, last_wf}), .q({v_y, nf_y, last_wf_y})
        );
        // lane p of fold nf holds channel nf*PE + p: live below LAST_C on the last window fold
        for (genvar p = 0; p < PE; p++) begin : g_live
            localparam int LIVE_FOLDS = LAST_C > p ? (LAST_C - p + PE - 1) / PE : 0;  // folds where lane p is live
            assign y_out[p * OB +: OB] = FOLDS > 1 && last_wf_y && nf_y >= LIVE_FOLDS[NB-1:0] ? '0 : y3[p * OB +: OB];
        end

        hg_sum_lanes #(
            .C(C), .PE(PE), .NF(NF), .NB(NB), .AB(AB), .OB(OB), .MB(MB), .SHB(SHB), .MAX_SHIFT(MAX_SHIFT),
            .MIN_SHIFT(MIN_SHIFT), .ROUND_UP(ROUND_UP), .ZP(ZP), .LO(LO), .HI(HI), .MULT(MULT), .SHIFT(SHIFT), .X_OFF(X_OFF)
        ) u_lanes (.clk(clk), .en(en), .sums(held[PE*AB-1:0]), .nf(nf), .y(y3));
    end else begin : g_max
        assign in_ready = en;
        assign fire = in_valid && en;
        logic v1, v2;
        assign nf_y = '0;
        assign y_out = y3;
        always_ff @(posedge clk) begin
            if (!rst_n) {v1, v2, v_y} <= '0;
            else if (en) {v1, v2, v_y} <= {fire && last_tap, v1, v2};
        end
        for (genvar c = 0; c < C; c++) begin : g_lane
            logic [OB-1:0] d2;
            always_ff @(posedge clk) begin
                if (en) begin
                    d2 <= acc[c][OB-1:0];
                    y3[c * OB +: OB] <= d2;
                end
            end
        end
    end

    hg_collect #(.GROUP((IS_AVG ? PE : C) * OB), .NF(NF), .NB(NB), .OUTW(C * OB)) u_out (
        .clk(clk), .rst_n(rst_n), .en(en), .in_valid(v_y), .nf(nf_y), .in_data(y_out),
        .out_data(out_data), .out_valid(out_valid), .out_ready(out_ready)
    );
endmodule
