// hg_gap: a global average pool over a folded input stream, for pools whose pixel (or its sums) is too
// wide for one beat (hw/layers/pool.reads_folded): PE channels a beat, the NF = ceil(C/PE) beats of a
// pixel consecutive, PIXELS pixels a frame. acc[f] holds the sums of channels f*PE .. f*PE+PE-1 over
// the frame; on the last pixel each beat's sums (this beat added) are registered and requantized by PE
// lanes of hg_requant, v = (s - X_OFF[c]) * mult[c] with X_OFF[c] = PIXELS*x_zp[c], and
// hg_collect writes OBG folds a beat (1: PE channels a beat; NF: the whole pixel). One input beat a
// cycle: PIXELS*NF cycles a frame (the cycle model). Pipeline: accumulate -> sums register ->
// RQD = 7 requant stages -> collector, all stalled together while a full output beat waits.
module hg_gap #(
    parameter int C = 4, parameter int IB = 8, parameter bit IN_SIGNED = 1'b1, parameter int PIXELS = 4,
    parameter int PE = 4, parameter int OB = 8, parameter int MB = 16, parameter int SHB = 6,
    parameter int MAX_SHIFT = 40, parameter int MIN_SHIFT = 0, parameter bit ROUND_UP = 1'b0,
    parameter int ZP = 0, parameter int LO = -128, parameter int HI = 127,
    parameter logic [C*MB-1:0] MULT = '0,
    parameter logic [C*SHB-1:0] SHIFT = '0,
    parameter logic [C*32-1:0] X_OFF = '0,  // PIXELS * x_zp[c], 32-bit two's complement each
    parameter int OBG = 1, parameter int OUTW = PE * OB
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [PE*IB-1:0] in_data,
    input  logic             in_valid,
    output logic             in_ready,
    output logic [OUTW-1:0]  out_data,
    output logic             out_valid,
    input  logic             out_ready
);
    localparam int NF = (C + PE - 1) / PE, NB = $clog2(NF + 1), LNF = NF - 1;
    localparam int AB = IB + 2 + $clog2(PIXELS + 1);  // a channel's sum over the frame, signed
    localparam int PB = $clog2(PIXELS + 1), LPX = PIXELS - 1;
    localparam int LASTW = OBG < NF ? (C - (NF - 1) * PE) * OB : PE * OB;
    localparam int RQD = 7;  // hg_requant's DEPTH

    logic en, fire, last_px, v_y;
    logic [NB-1:0] f, nf1, nf_y;
    logic [PB-1:0] px;
    logic [PE*AB-1:0] acc [0:NF-1];
    logic [PE*AB-1:0] sums, s1;
    logic [PE*OB-1:0] y3;

    assign en = !out_valid || out_ready;
    assign in_ready = en;
    assign fire = in_valid && en;
    assign last_px = px == LPX[PB-1:0];

    // this beat's sums: the running sums of fold f plus the beat (the first pixel starts them)
    for (genvar p = 0; p < PE; p++) begin : g_sum
        logic signed [AB-1:0] x, running;
        assign x = {{(AB - IB){(IN_SIGNED ? in_data[p * IB + IB - 1] : 1'b0)}}, in_data[p * IB +: IB]};
        assign running = px == '0 ? '0 : acc[f][p * AB +: AB];
        assign sums[p * AB +: AB] = running + x;
    end

    always_ff @(posedge clk) begin
        if (fire) acc[f] <= sums;
        if (en) s1 <= sums;
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            f <= '0;
            px <= '0;
        end else begin
            if (fire) begin
                f <= f == LNF[NB-1:0] ? '0 : f + 1'b1;
                if (f == LNF[NB-1:0]) px <= last_px ? '0 : px + 1'b1;
            end
        end
    end
    always_ff @(posedge clk) if (en) nf1 <= f;  // the fold of s1
    // sums register -> RQD requant stages: the valid bit and fold beside the lanes' data
    hg_delay #(.W(1 + NB), .D(1 + RQD), .RESET(1'b1)) u_v (
        .clk(clk), .rst_n(rst_n), .en(en), .d({fire && last_px, f}), .q({v_y, nf_y})
    );

    hg_sum_lanes #(
        .C(C), .PE(PE), .NF(NF), .NB(NB), .AB(AB), .OB(OB), .MB(MB), .SHB(SHB), .MAX_SHIFT(MAX_SHIFT),
        .MIN_SHIFT(MIN_SHIFT), .ROUND_UP(ROUND_UP), .ZP(ZP), .LO(LO), .HI(HI), .MULT(MULT), .SHIFT(SHIFT), .X_OFF(X_OFF)
    ) u_lanes (.clk(clk), .en(en), .sums(s1), .nf(nf1), .y(y3));

    hg_collect #(.GROUP(PE * OB), .NF(NF), .NB(NB), .OUTW(OUTW), .BG(OBG), .LASTW(LASTW)) u_out (
        .clk(clk), .rst_n(rst_n), .en(en), .in_valid(v_y), .nf(nf_y), .in_data(y3),
        .out_data(out_data), .out_valid(out_valid), .out_ready(out_ready)
    );
endmodule
