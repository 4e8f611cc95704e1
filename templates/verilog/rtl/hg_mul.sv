// hg_mul: p = a * b (signed), two register stages: the operands, then the product; both advance with
// en. PRIM = "MULT18X18D" (ECP5 parts, operands of 18 bits or less): the sysDSP block does it with its
// own input and output registers (REG_INPUTA/B, REG_OUTPUT on CLK0, enabled by CE0 = en), so neither
// the route into the multiplier nor the one out of it is between two fabric registers across the
// device. The block is HG_MULT18X18D (hg_mult18x18d.sv: its model for simulation; `hlsgen pnr`
// reads it as a black box and makes it a MULT18X18D with those registers after synthesis). Else
// (Xilinx: Yosys and Vivado absorb the registers into the DSP48 themselves) a plain registered a * b.
module hg_mul #(
    parameter int AW = 8,
    parameter int BW = 8,
    parameter int PW = AW + BW,
    parameter PRIM = ""
) (
    input  logic                 clk,
    input  logic                 en,
    input  logic signed [AW-1:0] a,
    input  logic signed [BW-1:0] b,
    output logic signed [PW-1:0] p
);
    /* verilator lint_off WIDTHEXPAND */
    localparam bit DSP18 = PRIM == "MULT18X18D" && AW <= 18 && BW <= 18;  // (text parameters differ in width)
    /* verilator lint_on WIDTHEXPAND */
    if (DSP18) begin : g_mult18x18d
        logic [17:0] a18, b18;
        logic [35:0] p36;
        assign a18 = 18'($signed(a));
        assign b18 = 18'($signed(b));
        HG_MULT18X18D u_dsp (
            .CLK0(clk), .CE0(en), .RST0(1'b0), .SIGNEDA(1'b1), .SIGNEDB(1'b1),
            .A0(a18[0]), .A1(a18[1]), .A2(a18[2]), .A3(a18[3]), .A4(a18[4]), .A5(a18[5]), .A6(a18[6]),
            .A7(a18[7]), .A8(a18[8]), .A9(a18[9]), .A10(a18[10]), .A11(a18[11]), .A12(a18[12]), .A13(a18[13]),
            .A14(a18[14]), .A15(a18[15]), .A16(a18[16]), .A17(a18[17]),
            .B0(b18[0]), .B1(b18[1]), .B2(b18[2]), .B3(b18[3]), .B4(b18[4]), .B5(b18[5]), .B6(b18[6]),
            .B7(b18[7]), .B8(b18[8]), .B9(b18[9]), .B10(b18[10]), .B11(b18[11]), .B12(b18[12]), .B13(b18[13]),
            .B14(b18[14]), .B15(b18[15]), .B16(b18[16]), .B17(b18[17]),
            .P0(p36[0]), .P1(p36[1]), .P2(p36[2]), .P3(p36[3]), .P4(p36[4]), .P5(p36[5]), .P6(p36[6]),
            .P7(p36[7]), .P8(p36[8]), .P9(p36[9]), .P10(p36[10]), .P11(p36[11]), .P12(p36[12]), .P13(p36[13]),
            .P14(p36[14]), .P15(p36[15]), .P16(p36[16]), .P17(p36[17]), .P18(p36[18]), .P19(p36[19]),
            .P20(p36[20]), .P21(p36[21]), .P22(p36[22]), .P23(p36[23]), .P24(p36[24]), .P25(p36[25]),
            .P26(p36[26]), .P27(p36[27]), .P28(p36[28]), .P29(p36[29]), .P30(p36[30]), .P31(p36[31]),
            .P32(p36[32]), .P33(p36[33]), .P34(p36[34]), .P35(p36[35])
        );
        assign p = p36[PW-1:0];
    end else begin : g_fabric
        logic signed [AW-1:0] ar;
        logic signed [BW-1:0] br;
        always_ff @(posedge clk) begin
            if (en) begin
                ar <= a;
                br <= b;
                p <= ar * br;
            end
        end
    end
endmodule
