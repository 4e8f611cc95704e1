// hg_subbeats: the counters of hg_split and hg_join. Sub-beats come in groups of S, packed K to a wide
// beat: a group is G = ceil(S/K) wide beats, the last holding L = S - (G-1)*K. Each `step` moves one
// sub-beat; `last` is high on the last sub-beat of a wide beat and `end_group` on the group's last wide
// beat. Counters only: j (sub-beat of the wide beat) and g (wide beat of the group), each wrapping at a
// constant.
module hg_subbeats #(
    parameter int S = 1,
    parameter int K = 1
) (
    input  logic clk,
    input  logic rst_n,
    input  logic step,
    output logic last,
    output logic end_group
);
    localparam int G = (S + K - 1) / K;
    localparam int L = S - (G - 1) * K;
    localparam int JW = K > 1 ? $clog2(K) : 1;
    localparam int GW = G > 1 ? $clog2(G) : 1;
    localparam int LK = K - 1;
    localparam int LL = L - 1;
    localparam int LG = G - 1;

    logic [JW-1:0] j;
    logic [GW-1:0] g;

    assign end_group = g == LG[GW-1:0];
    assign last = end_group ? j == LL[JW-1:0] : j == LK[JW-1:0];

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            j <= '0;
            g <= '0;
        end else if (step) begin
            if (!last) j <= j + 1'b1;
            else begin
                j <= '0;
                g <= end_group ? '0 : g + 1'b1;
            end
        end
    end
endmodule
