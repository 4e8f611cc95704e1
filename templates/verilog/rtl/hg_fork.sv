// hg_fork: broadcast one stream to N consumers (a stream read by two layers, e.g. a residual skip).
// Only valid/ready pass through here: every consumer reads the producer's data wires directly.
// Each beat is offered to every output; an output that took it is masked until all have taken it,
// so consumers may accept in different cycles. in_ready depends only on out_ready and state.
module hg_fork #(
    parameter int N = 2
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic             in_valid,
    output logic             in_ready,
    output logic [N-1:0]     out_valid,
    input  logic [N-1:0]     out_ready
);
    logic [N-1:0] done;

    assign out_valid = in_valid ? ~done : '0;
    assign in_ready  = &(out_ready | done);

    always_ff @(posedge clk) begin
        if (!rst_n) done <= '0;
        else if (in_valid && in_ready) done <= '0;
        else done <= done | (out_valid & out_ready);
    end
endmodule
