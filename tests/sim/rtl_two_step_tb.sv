// Test wrapper for tests/sim/test_rtl_requant.py: one hg_mvu_lane with a two-step epilogue over two
// channels (nf selects the channel): step 1 is the model's intermediate quantizer (MID_ZP, MID_LO,
// MID_HI, MULT1, SHIFT1), step 2 adds a residual skip code and a bias B2 (POST_BIAS).
// Channel 0: M1 = 3, S1 = 2 (ties whenever acc = 2 mod 4), M = 5, S = 3, Mb = 2, B2 = -9.
// Channel 1: M1 = 12345, S1 = 17, M = -7, S = 4, Mb = 3, B2 = 100.
module rtl_two_step_tb (
    input  logic               clk,
    input  logic               nf,
    input  logic signed [19:0] acc,
    input  logic [15:0]        skip_data,
    output logic [7:0]         y_even,
    output logic [7:0]         y_up
);
    localparam logic [31:0] M1 = {16'sd12345, 16'sd3};
    localparam logic [9:0] S1 = {5'd17, 5'd2};
    localparam logic [9:0] M = {-5'sd7, 5'sd5};
    localparam logic [5:0] S = {3'd4, 3'd3};
    localparam logic [5:0] MB = {3'sd3, 3'sd2};
    localparam logic [17:0] SZ = {9'sd4, -9'sd6};
    localparam logic [17:0] PB = {9'sd100, -9'sd9};
    hg_mvu_lane #(.AB(20), .NF(2), .PE(1), .LANE(0), .NB(1), .COUT(2), .OB(8), .MB(5), .SHB(3), .MAX_SHIFT(4),
                  .HAS_SKIP(1'b1), .SKB(8), .SKIP_SIGNED(1'b1), .SMB(3), .ROUND_UP(1'b0), .ZP(7), .LO(-100),
                  .HI(90), .MULT(M), .MULT_NEG(M), .SHIFT(S), .SKIP_MULT(MB), .SKIP_ZP(SZ), .TWO_STEP(1'b1),
                  .MB1(16), .SHB1(5), .MAX_SHIFT1(17), .MID_ZP(-5), .MID_LO(-128), .MID_HI(127), .MXB(9), .TB1(10),
                  .HAS_PB(1'b1), .PBB(9), .MULT1(M1), .MULT1_NEG(M1), .SHIFT1(S1), .POST_BIAS(PB)) u_even (
        .clk(clk), .en(1'b1), .nf(nf), .sk_slot(nf), .acc(acc), .skip_data(skip_data), .y(y_even));
    hg_mvu_lane #(.AB(20), .NF(2), .PE(1), .LANE(0), .NB(1), .COUT(2), .OB(8), .MB(5), .SHB(3), .MAX_SHIFT(4),
                  .HAS_SKIP(1'b1), .SKB(8), .SKIP_SIGNED(1'b1), .SMB(3), .ROUND_UP(1'b1), .ZP(7), .LO(-100),
                  .HI(90), .MULT(M), .MULT_NEG(M), .SHIFT(S), .SKIP_MULT(MB), .SKIP_ZP(SZ), .TWO_STEP(1'b1),
                  .MB1(16), .SHB1(5), .MAX_SHIFT1(17), .MID_ZP(-5), .MID_LO(-128), .MID_HI(127), .MXB(9), .TB1(10),
                  .HAS_PB(1'b1), .PBB(9), .MULT1(M1), .MULT1_NEG(M1), .SHIFT1(S1), .POST_BIAS(PB)) u_up (
        .clk(clk), .en(1'b1), .nf(nf), .sk_slot(nf), .acc(acc), .skip_data(skip_data), .y(y_up));
endmodule
