// hg_pool: max or average pooling over window taps from hg_window (one input pixel of C channels per
// beat, KK taps per output pixel, all C channels in parallel, one tap per cycle).
// Max: integer max of the taps (padding taps hold the lowest code, so they never win).
// Average: s = sum of the taps (padding taps hold x_zp), v = (s - X_OFF[c]) * mult[c] with
// X_OFF[c] = KK*x_zp[c], then the
// requant of hg_requant: y = clamp(ZP + round_shift(v, shift[c]), LO, HI).
// Pipeline: accumulate -> 2 requant stages (max: 2 plain registers) -> output register.
module hg_pool #(
    parameter int C = 4, parameter int IB = 8, parameter bit IN_SIGNED = 1'b1,
    parameter int KK = 4, parameter bit IS_AVG = 1'b0,
    parameter int OB = 8, parameter int MB = 16, parameter int SHB = 6, parameter int MAX_SHIFT = 40,
    parameter bit ROUND_UP = 1'b0, parameter int ZP = 0, parameter int LO = -128, parameter int HI = 127,
    parameter logic [C*MB-1:0] MULT = '0,
    parameter logic [C*SHB-1:0] SHIFT = '0,
    parameter logic [C*32-1:0] X_OFF = '0  // KK * x_zp[c], 32-bit two's complement each
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
    localparam int XB = AB + 1;                    // sum minus KK * x_zp
    localparam int TB = $clog2(KK + 1), LKK = KK - 1;

    logic en, fire, v1, v2, v3;
    logic [TB-1:0] tap;
    logic signed [AB-1:0] acc [0:C-1];
    logic [C*OB-1:0] y3;

    assign en = !out_valid || out_ready;
    assign fire = in_valid && en;
    assign in_ready = en;

    always_ff @(posedge clk) begin
        if (fire) begin
            for (int c = 0; c < C; c++) begin
                logic signed [AB-1:0] x;
                x = {{(AB - IB){(IN_SIGNED ? in_data[c * IB + IB - 1] : 1'b0)}}, in_data[c * IB +: IB]};
                if (tap == '0) acc[c] <= x;
                else if (IS_AVG) acc[c] <= acc[c] + x;
                else if (x > acc[c]) acc[c] <= x;
            end
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            tap <= '0;
            {v1, v2, v3} <= '0;
        end else if (en) begin
            if (fire) tap <= tap == LKK[TB-1:0] ? '0 : tap + 1'b1;
            {v1, v2, v3} <= {fire && tap == LKK[TB-1:0], v1, v2};
        end
    end

    for (genvar c = 0; c < C; c++) begin : g_lane
        if (IS_AVG) begin : g_avg
            localparam logic [MB-1:0] M = MULT[c * MB +: MB];
            localparam logic [SHB-1:0] S = SHIFT[c * SHB +: SHB];
            localparam logic [XB-1:0] OFF = X_OFF[c * 32 +: XB];
            logic signed [XB-1:0] xs;
            assign xs = {acc[c][AB-1], acc[c]} - OFF;
            hg_requant #(
                .XB(XB), .MB(MB), .SHB(SHB), .MAX_SHIFT(MAX_SHIFT), .ROUND_UP(ROUND_UP), .OB(OB),
                .ZP(ZP), .LO(LO), .HI(HI)
            ) u_rq (
                .clk(clk), .en(en), .x(xs), .m(M), .m_neg(M),
                .sx(10'sd0), .sm(16'sd0), .b(2'sd0), .sh(S), .y(y3[c * OB +: OB])
            );
        end else begin : g_max
            logic [OB-1:0] d2;
            always_ff @(posedge clk) begin
                if (en) begin
                    d2 <= acc[c][OB-1:0];
                    y3[c * OB +: OB] <= d2;
                end
            end
        end
    end

    hg_collect #(.GROUP(C * OB), .NF(1), .NB(1), .OUTW(C * OB)) u_out (
        .clk(clk), .rst_n(rst_n), .en(en), .in_valid(v3), .nf(1'b0), .in_data(y3),
        .out_data(out_data), .out_valid(out_valid), .out_ready(out_ready)
    );
endmodule
