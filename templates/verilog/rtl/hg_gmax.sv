// hg_gmax: a global max pool over a folded input stream, for pools whose pixel is too wide for one
// beat (hw/layers/pool.reads_folded): F channels a beat, the NF beats of a pixel consecutive, PIXELS
// pixels a frame. best[f] holds the running max of fold f's channels; on the last pixel each beat's
// maxima (this beat included) leave as one output beat of F channels. A pixel's last-beat padding
// lanes are zero on input and stay zero (the max of zeros). One input beat a cycle: PIXELS*NF cycles
// a frame (the cycle model). Pipeline: max -> output register, stalled while a full output beat waits.
module hg_gmax #(
    parameter int F = 4, parameter int IB = 8, parameter bit IN_SIGNED = 1'b1,
    parameter int NF = 2, parameter int PIXELS = 4
) (
    input  logic            clk,
    input  logic            rst_n,
    input  logic [F*IB-1:0] in_data,
    input  logic            in_valid,
    output logic            in_ready,
    output logic [F*IB-1:0] out_data,
    output logic            out_valid,
    input  logic            out_ready
);
    localparam int NB = NF > 1 ? $clog2(NF) : 1, LNF = NF - 1;  // f indexes best[0:NF-1]
    localparam int PB = $clog2(PIXELS + 1), LPX = PIXELS - 1;

    logic en, fire, first_px, last_px, last_f;
    logic [NB-1:0] f;
    logic [PB-1:0] px;
    logic [F*IB-1:0] best [0:NF-1];
    logic [F*IB-1:0] running, maxima;

    assign en = !out_valid || out_ready;
    assign in_ready = en;
    assign fire = in_valid && en;
    assign first_px = px == '0;
    assign last_px = px == LPX[PB-1:0];
    assign last_f = f == LNF[NB-1:0];
    assign running = best[f];

    // this beat's maxima: the running maxima of fold f and the beat (the first pixel starts them)
    for (genvar c = 0; c < F; c++) begin : g_max
        logic [IB-1:0] x, b;
        logic above;
        assign x = in_data[c * IB +: IB];
        assign b = running[c * IB +: IB];
        assign above = IN_SIGNED ? $signed(x) > $signed(b) : x > b;
        assign maxima[c * IB +: IB] = first_px || above ? x : b;
    end

    always_ff @(posedge clk) begin
        if (fire) best[f] <= maxima;
        if (fire && last_px) out_data <= maxima;
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            f <= '0;
            px <= '0;
            out_valid <= 1'b0;
        end else if (en) begin
            out_valid <= fire && last_px;
            if (fire) begin
                f <= last_f ? '0 : f + 1'b1;
                if (last_f) px <= last_px ? '0 : px + 1'b1;
            end
        end
    end
endmodule
