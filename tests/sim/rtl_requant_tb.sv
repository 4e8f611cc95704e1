// Test wrapper for tests/sim/test_rtl_requant.py: two hg_requant lanes with the same inputs, one
// rounding ties to even and one half up, with LeakyReLU (m_neg), a skip term and clamps.
module rtl_requant_tb (
    input  logic               clk,
    input  logic signed [19:0] x,
    input  logic signed [16:0] m,
    input  logic signed [16:0] m_neg,
    input  logic signed [9:0]  sx,
    input  logic signed [17:0] sm,
    input  logic [5:0]         sh,
    output logic [7:0]         y_even,
    output logic [7:0]         y_up
);
    hg_requant #(.XB(20), .MB(17), .HAS_NEG(1'b1), .HAS_SKIP(1'b1), .SXB(10), .SMB(18), .SHB(6), .MAX_SHIFT(40),
                 .ROUND_UP(1'b0), .OB(8), .ZP(3), .LO(-100), .HI(90)) u_even (
        .clk(clk), .en(1'b1), .x(x), .m(m), .m_neg(m_neg), .sx(sx), .sm(sm), .b(2'sd0), .sh(sh), .y(y_even));
    hg_requant #(.XB(20), .MB(17), .HAS_NEG(1'b1), .HAS_SKIP(1'b1), .SXB(10), .SMB(18), .SHB(6), .MAX_SHIFT(40),
                 .ROUND_UP(1'b1), .OB(8), .ZP(3), .LO(-100), .HI(90)) u_up (
        .clk(clk), .en(1'b1), .x(x), .m(m), .m_neg(m_neg), .sx(sx), .sm(sm), .b(2'sd0), .sh(sh), .y(y_up));
endmodule
