// hg_lut: an elementwise function tabulated over every input code (QLut), all C channels in
// parallel, one pixel per cycle: y[c] = rom[x[c] - X_LO]. The table (ENTRIES words of OB bits) is
// read from MEM_FILE with $readmemh; every channel lane holds its own copy so that all lanes read
// in the same cycle (a small distributed ROM each). Pipeline: ROM read register -> output register.
// A pixel too wide for one beat arrives as FOLDS beats of C channels (hw/layers/lut.py); lanes LAST_C
// and up of its last beat are padding, written as zero (the stream convention) instead of rom[0 - X_LO].
module hg_lut #(
    parameter int C = 4,
    parameter int FOLDS = 1, parameter int LAST_C = C,
    parameter int IB = 8, parameter bit IN_SIGNED = 1'b1,
    parameter int OB = 8,
    parameter int ENTRIES = 256,
    parameter int X_LO = -128,
    parameter MEM_FILE = ""
) (
    input  logic            clk,
    input  logic            rst_n,
    input  logic [C*IB-1:0] in_data,
    input  logic            in_valid,
    output logic            in_ready,
    output logic [C*OB-1:0] out_data,
    output logic            out_valid,
    input  logic            out_ready
);
    localparam int XW = IB + 1;  // any code of either signedness, minus X_LO, fits IB + 1 bits
    logic en, v1;
    logic [C*OB-1:0] y1;

    assign en = !out_valid || out_ready;
    assign in_ready = en;

    always_ff @(posedge clk) begin
        if (!rst_n) v1 <= 1'b0;
        else if (en) v1 <= in_valid;
    end

    /* verilator lint_off UNUSEDSIGNAL */
    logic pad1;  // the beat in the ROM stage is a pixel's last: its lanes LAST_C.. are padding
    /* verilator lint_on UNUSEDSIGNAL */
    if (FOLDS > 1) begin : g_folds
        localparam int FB = $clog2(FOLDS), LF = FOLDS - 1;
        logic [FB-1:0] f;
        always_ff @(posedge clk) begin
            if (!rst_n) f <= '0;
            else if (in_valid && in_ready) f <= f == LF[FB-1:0] ? '0 : f + 1'b1;
        end
        always_ff @(posedge clk) begin
            if (en) pad1 <= f == LF[FB-1:0];
        end
    end else begin : g_whole
        assign pad1 = 1'b0;
    end

    for (genvar c = 0; c < C; c++) begin : g_lane
        logic [OB-1:0] rom [0:ENTRIES-1];
        initial if (MEM_FILE != "") $readmemh(MEM_FILE, rom);
        logic signed [XW-1:0] code;
        /* verilator lint_off UNUSEDSIGNAL */
        logic [XW-1:0] idx;  // the top bit is 0 for every code in range
        /* verilator lint_on UNUSEDSIGNAL */
        assign code = {(IN_SIGNED ? in_data[c * IB + IB - 1] : 1'b0), in_data[c * IB +: IB]};
        assign idx = code - X_LO[XW-1:0];
        always_ff @(posedge clk) begin
            if (en) y1[c * OB +: OB] <= rom[idx[IB-1:0]];
        end
    end

    logic [C*OB-1:0] y1_kept;  // y1 with a last beat's padding lanes zero
    for (genvar c = 0; c < C; c++) begin : g_keep
        if (c < LAST_C) begin : g_live
            assign y1_kept[c * OB +: OB] = y1[c * OB +: OB];
        end else begin : g_pad
            assign y1_kept[c * OB +: OB] = pad1 ? '0 : y1[c * OB +: OB];
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) out_valid <= 1'b0;
        else if (en) out_valid <= v1;
    end
    always_ff @(posedge clk) begin
        if (en) out_data <= y1_kept;
    end
endmodule
