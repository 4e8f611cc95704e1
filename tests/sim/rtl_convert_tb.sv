// Test wrapper for tests/sim/test_rtl_convert.py: hg_split and hg_join side by side at several
// (W, S, K), each instance with its own stream ports <name>_in_*/<name>_out_*, plus one fold change
// through both primitives (c: 7 channels of 3 bits, fold 4 -> 6 via fold 2: split(6, 4, 2) then
// join(6, 4, 3), connected directly).
module rtl_convert_tb (
    input  logic clk,
    input  logic rst_n,
    input  logic [4:0]    s1_in_data,  input  logic s1_in_valid,  output logic s1_in_ready,
    output logic [4:0]    s1_out_data, output logic s1_out_valid, input  logic s1_out_ready,
    input  logic [11:0]   s2_in_data,  input  logic s2_in_valid,  output logic s2_in_ready,
    output logic [3:0]    s2_out_data, output logic s2_out_valid, input  logic s2_out_ready,
    input  logic [11:0]   s3_in_data,  input  logic s3_in_valid,  output logic s3_in_ready,
    output logic [2:0]    s3_out_data, output logic s3_out_valid, input  logic s3_out_ready,
    input  logic [23:0]   s4_in_data,  input  logic s4_in_valid,  output logic s4_in_ready,
    output logic [7:0]    s4_out_data, output logic s4_out_valid, input  logic s4_out_ready,
    input  logic [17:0]   s5_in_data,  input  logic s5_in_valid,  output logic s5_in_ready,
    output logic [5:0]    s5_out_data, output logic s5_out_valid, input  logic s5_out_ready,
    input  logic [13:0]   s6_in_data,  input  logic s6_in_valid,  output logic s6_in_ready,
    output logic [6:0]    s6_out_data, output logic s6_out_valid, input  logic s6_out_ready,
    input  logic [99:0]   s7_in_data,  input  logic s7_in_valid,  output logic s7_in_ready,
    output logic [19:0]   s7_out_data, output logic s7_out_valid, input  logic s7_out_ready,
    input  logic [4:0]    j1_in_data,  input  logic j1_in_valid,  output logic j1_in_ready,
    output logic [4:0]    j1_out_data, output logic j1_out_valid, input  logic j1_out_ready,
    input  logic [3:0]    j2_in_data,  input  logic j2_in_valid,  output logic j2_in_ready,
    output logic [11:0]   j2_out_data, output logic j2_out_valid, input  logic j2_out_ready,
    input  logic [2:0]    j3_in_data,  input  logic j3_in_valid,  output logic j3_in_ready,
    output logic [11:0]   j3_out_data, output logic j3_out_valid, input  logic j3_out_ready,
    input  logic [7:0]    j4_in_data,  input  logic j4_in_valid,  output logic j4_in_ready,
    output logic [23:0]   j4_out_data, output logic j4_out_valid, input  logic j4_out_ready,
    input  logic [5:0]    j5_in_data,  input  logic j5_in_valid,  output logic j5_in_ready,
    output logic [17:0]   j5_out_data, output logic j5_out_valid, input  logic j5_out_ready,
    input  logic [6:0]    j6_in_data,  input  logic j6_in_valid,  output logic j6_in_ready,
    output logic [13:0]   j6_out_data, output logic j6_out_valid, input  logic j6_out_ready,
    input  logic [19:0]   j7_in_data,  input  logic j7_in_valid,  output logic j7_in_ready,
    output logic [99:0]   j7_out_data, output logic j7_out_valid, input  logic j7_out_ready,
    input  logic [11:0]   c_in_data,   input  logic c_in_valid,   output logic c_in_ready,
    output logic [17:0]   c_out_data,  output logic c_out_valid,  input  logic c_out_ready
);
    // K == 1: a pass-through with group bookkeeping
    hg_split #(.W(5), .S(3), .K(1)) u_s1 (.clk(clk), .rst_n(rst_n),
        .in_data(s1_in_data), .in_valid(s1_in_valid), .in_ready(s1_in_ready),
        .out_data(s1_out_data), .out_valid(s1_out_valid), .out_ready(s1_out_ready));
    // S == 1: one sub-beat per input beat, the rest dropped
    hg_split #(.W(4), .S(1), .K(3)) u_s2 (.clk(clk), .rst_n(rst_n),
        .in_data(s2_in_data), .in_valid(s2_in_valid), .in_ready(s2_in_ready),
        .out_data(s2_out_data), .out_valid(s2_out_valid), .out_ready(s2_out_ready));
    // S < K: one input beat per group, L = S
    hg_split #(.W(3), .S(2), .K(4)) u_s3 (.clk(clk), .rst_n(rst_n),
        .in_data(s3_in_data), .in_valid(s3_in_valid), .in_ready(s3_in_ready),
        .out_data(s3_out_data), .out_valid(s3_out_valid), .out_ready(s3_out_ready));
    // S a multiple of K (L = K)
    hg_split #(.W(8), .S(6), .K(3)) u_s4 (.clk(clk), .rst_n(rst_n),
        .in_data(s4_in_data), .in_valid(s4_in_valid), .in_ready(s4_in_ready),
        .out_data(s4_out_data), .out_valid(s4_out_valid), .out_ready(s4_out_ready));
    // S not a multiple of K (L = 1)
    hg_split #(.W(6), .S(7), .K(3)) u_s5 (.clk(clk), .rst_n(rst_n),
        .in_data(s5_in_data), .in_valid(s5_in_valid), .in_ready(s5_in_ready),
        .out_data(s5_out_data), .out_valid(s5_out_valid), .out_ready(s5_out_ready));
    // K == 2, L = 1
    hg_split #(.W(7), .S(5), .K(2)) u_s6 (.clk(clk), .rst_n(rst_n),
        .in_data(s6_in_data), .in_valid(s6_in_valid), .in_ready(s6_in_ready),
        .out_data(s6_out_data), .out_valid(s6_out_valid), .out_ready(s6_out_ready));
    // wide: 100-bit input beats, L = 2
    hg_split #(.W(20), .S(7), .K(5)) u_s7 (.clk(clk), .rst_n(rst_n),
        .in_data(s7_in_data), .in_valid(s7_in_valid), .in_ready(s7_in_ready),
        .out_data(s7_out_data), .out_valid(s7_out_valid), .out_ready(s7_out_ready));
    // K == 1
    hg_join #(.W(5), .S(3), .K(1)) u_j1 (.clk(clk), .rst_n(rst_n),
        .in_data(j1_in_data), .in_valid(j1_in_valid), .in_ready(j1_in_ready),
        .out_data(j1_out_data), .out_valid(j1_out_valid), .out_ready(j1_out_ready));
    // S == 1
    hg_join #(.W(4), .S(1), .K(3)) u_j2 (.clk(clk), .rst_n(rst_n),
        .in_data(j2_in_data), .in_valid(j2_in_valid), .in_ready(j2_in_ready),
        .out_data(j2_out_data), .out_valid(j2_out_valid), .out_ready(j2_out_ready));
    // S < K
    hg_join #(.W(3), .S(2), .K(4)) u_j3 (.clk(clk), .rst_n(rst_n),
        .in_data(j3_in_data), .in_valid(j3_in_valid), .in_ready(j3_in_ready),
        .out_data(j3_out_data), .out_valid(j3_out_valid), .out_ready(j3_out_ready));
    // S a multiple of K
    hg_join #(.W(8), .S(6), .K(3)) u_j4 (.clk(clk), .rst_n(rst_n),
        .in_data(j4_in_data), .in_valid(j4_in_valid), .in_ready(j4_in_ready),
        .out_data(j4_out_data), .out_valid(j4_out_valid), .out_ready(j4_out_ready));
    // S not a multiple of K
    hg_join #(.W(6), .S(7), .K(3)) u_j5 (.clk(clk), .rst_n(rst_n),
        .in_data(j5_in_data), .in_valid(j5_in_valid), .in_ready(j5_in_ready),
        .out_data(j5_out_data), .out_valid(j5_out_valid), .out_ready(j5_out_ready));
    // K == 2 (held is one sub-beat)
    hg_join #(.W(7), .S(5), .K(2)) u_j6 (.clk(clk), .rst_n(rst_n),
        .in_data(j6_in_data), .in_valid(j6_in_valid), .in_ready(j6_in_ready),
        .out_data(j6_out_data), .out_valid(j6_out_valid), .out_ready(j6_out_ready));
    // wide: 100-bit output beats
    hg_join #(.W(20), .S(7), .K(5)) u_j7 (.clk(clk), .rst_n(rst_n),
        .in_data(j7_in_data), .in_valid(j7_in_valid), .in_ready(j7_in_ready),
        .out_data(j7_out_data), .out_valid(j7_out_valid), .out_ready(j7_out_ready));
    // the fold change 4 -> 6 of 7 channels of 3 bits (hlsgen.hw.convert.fold_change(7, 3, 4, 6))
    logic [5:0] c_mid_data;
    logic c_mid_valid, c_mid_ready;
    hg_split #(.W(6), .S(4), .K(2)) u_c_split (.clk(clk), .rst_n(rst_n),
        .in_data(c_in_data), .in_valid(c_in_valid), .in_ready(c_in_ready),
        .out_data(c_mid_data), .out_valid(c_mid_valid), .out_ready(c_mid_ready));
    hg_join #(.W(6), .S(4), .K(3)) u_c_join (.clk(clk), .rst_n(rst_n),
        .in_data(c_mid_data), .in_valid(c_mid_valid), .in_ready(c_mid_ready),
        .out_data(c_out_data), .out_valid(c_out_valid), .out_ready(c_out_ready));
endmodule
