// hg_collect: assembles NF groups of GROUP bits (group nf = channels nf*PE .. nf*PE+PE-1) into one
// output beat (the low OUTW bits), held in an output register with valid/ready. Groups arrive in
// order while `en` is high; the caller stalls (en low) while a full beat waits for out_ready.
module hg_collect #(
    parameter int GROUP = 8, parameter int NF = 1, parameter int NB = 1, parameter int OUTW = 8
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic             en,
    input  logic             in_valid,
    input  logic [NB-1:0]    nf,
    input  logic [GROUP-1:0] in_data,
    output logic [OUTW-1:0]  out_data,
    output logic             out_valid,
    input  logic             out_ready
);
    localparam int LNF = NF - 1;
    // lanes of the last group beyond the channel count (NF*PE > COUT) are padding, never output
    /* verilator lint_off UNUSEDSIGNAL */
    logic [NF*GROUP-1:0] beat;
    /* verilator lint_on UNUSEDSIGNAL */

    logic take, last;
    assign last = nf == LNF[NB-1:0];
    assign take = en && in_valid;

    if (NF == 1) begin : g_one
        assign beat = in_data;
    end else begin : g_many
        logic [(NF-1)*GROUP-1:0] held;  // groups 0 .. NF-2 of the current beat, oldest lowest
        if (NF == 2) begin : g_two
            always_ff @(posedge clk) if (take && !last) held <= in_data;
        end else begin : g_shift
            always_ff @(posedge clk) if (take && !last) held <= {in_data, held[(NF-1)*GROUP-1:GROUP]};
        end
        assign beat = {in_data, held};
    end

    always_ff @(posedge clk) begin
        if (!rst_n) out_valid <= 1'b0;
        else begin
            if (out_valid && out_ready) out_valid <= 1'b0;
            if (take && last) out_valid <= 1'b1;
        end
        if (take && last) out_data <= beat[OUTW-1:0];
    end
endmodule
