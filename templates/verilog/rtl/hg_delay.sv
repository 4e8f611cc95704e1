// hg_delay: D enabled register stages of a W-bit word (D = 0: a wire), advancing when `en` is high.
// Callers of hg_requant delay what travels beside its data (valid bits, fold indices, skip codes) by
// its DEPTH with one of these. RESET: the stages clear while rst_n is low (valid bits); else no reset.
module hg_delay #(
    parameter int W = 1, parameter int D = 1, parameter bit RESET = 1'b0
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         en,
    input  logic [W-1:0] d,
    output logic [W-1:0] q
);
    if (D == 0) begin : g_wire
        wire unused = clk ^ rst_n ^ en;  // lint: no stage reads them
        assign q = d;
    end else begin : g_stages
        logic [D*W-1:0] r;  // stage k at bits [k*W +: W]
        logic [D*W-1:0] r_next;
        if (D == 1) begin : g_one
            assign r_next = d;
        end else begin : g_many
            assign r_next = {r[(D-1)*W-1:0], d};
        end
        always_ff @(posedge clk) begin
            if (RESET && !rst_n) r <= '0;
            else if (en) r <= r_next;
        end
        assign q = r[(D-1)*W +: W];
    end
endmodule
