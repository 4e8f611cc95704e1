// hlsgen C-sim testbench helpers: read OUT/vectors hex files into streams, compare output beats
// with the golden model's, report the first mismatch (frame, pixel, channel, expected, got).
// Testbench code only: never synthesized.
#ifndef HLSGEN_TB_UTIL_H
#define HLSGEN_TB_UTIL_H

#include <ap_int.h>
#include <hls_stream.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace hlsgen_tb {

// One line of a vectors file: W/4 hex digits, most significant first.
template <int W>
bool parse_hex(const std::string& line, ap_uint<W>& beat) {
    if (line.size() != (size_t)(W / 4)) return false;
    beat = 0;
    for (size_t i = 0; i < line.size(); i++) {
        const char ch = line[i];
        int nibble;
        if (ch >= '0' && ch <= '9') nibble = ch - '0';
        else if (ch >= 'a' && ch <= 'f') nibble = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F') nibble = ch - 'A' + 10;
        else return false;
        beat = (beat << 4) | ap_uint<W>(nibble);
    }
    return true;
}

template <int W>
bool read_hex(const std::string& path, std::vector<ap_uint<W> >& beats) {
    std::ifstream f(path.c_str());
    if (!f) {
        std::printf("ERROR: cannot open %s\n", path.c_str());
        return false;
    }
    std::string line;
    for (int n = 1; std::getline(f, line); n++) {
        if (!line.empty() && line[line.size() - 1] == '\r') line.erase(line.size() - 1);
        if (line.empty()) continue;
        ap_uint<W> beat;
        if (!parse_hex<W>(line, beat)) {
            std::printf("ERROR: %s line %d: expected %d hex digits, got '%s'\n", path.c_str(), n, W / 4, line.c_str());
            return false;
        }
        beats.push_back(beat);
    }
    return true;
}

// Fill a stream with all frames of a vectors file (it must hold exactly `count` beats).
template <int W>
bool load_stream(const std::string& path, long count, hls::stream<ap_uint<W> >& s) {
    std::vector<ap_uint<W> > beats;
    if (!read_hex<W>(path, beats)) return false;
    if ((long)beats.size() != count) {
        std::printf("ERROR: %s holds %ld beats, expected %ld\n", path.c_str(), (long)beats.size(), count);
        return false;
    }
    for (size_t i = 0; i < beats.size(); i++) s.write(beats[i]);
    return true;
}

template <int W>
long channel_code(const ap_uint<W>& beat, int c, int bits, bool is_signed) {
    const ap_uint<64> raw = beat.range(c * bits + bits - 1, c * bits);
    long v = (long)raw.to_uint64();
    if (is_signed && (v >> (bits - 1)) & 1) v -= 1L << bits;
    return v;
}

// Compares one output stream frame by frame; prints the first mismatching beat's first channel.
template <int W>
class OutputChecker {
  public:
    // `fold` channels per beat (a pixel's ceil(channels / fold) beats are consecutive), or (a port)
    // `pack` whole pixels of `channels` codes per beat
    OutputChecker(const char* name, int beats, int channels, int fold, int pack, int bits, bool is_signed)
        : name_(name), beats_(beats), channels_(channels), fold_(fold), pack_(pack),
          folds_((channels + fold - 1) / fold), bits_(bits), signed_(is_signed), compared_(0), bad_(0) {}

    bool load(const std::string& path, int frames) {
        if (!read_hex<W>(path, expected_)) return false;
        if ((long)expected_.size() != (long)frames * beats_) {
            std::printf("ERROR: %s holds %ld beats, expected %ld\n", path.c_str(), (long)expected_.size(),
                        (long)frames * beats_);
            return false;
        }
        return true;
    }

    void check_frame(hls::stream<ap_uint<W> >& out, int frame) {
        for (int px = 0; px < beats_; px++) {
            if (out.empty()) {
                std::printf("MISMATCH %s frame %d: the top function wrote %d of %d beats\n", name_, frame, px, beats_);
                bad_ += beats_ - px;
                return;
            }
            compare(out.read(), expected_[(size_t)frame * beats_ + px], frame, px);
        }
    }

    void finish(hls::stream<ap_uint<W> >& out, long& beats, long& bad) {
        long extra = 0;
        while (!out.empty()) {
            out.read();
            extra++;
        }
        if (extra) std::printf("MISMATCH %s: %ld beats more than expected\n", name_, extra);
        beats += compared_;
        bad += bad_ + extra;
    }

  private:
    void compare(const ap_uint<W>& got, const ap_uint<W>& want, int frame, int beat) {
        compared_++;
        if (got == want) return;
        if (bad_++) return;  // only the first mismatch is described
        const int px = pack_ > 1 ? beat * pack_ : beat / folds_, base = pack_ > 1 ? 0 : (beat % folds_) * fold_;
        for (int c = 0; c < fold_ * pack_; c++) {
            const long g = channel_code<W>(got, c, bits_, signed_), e = channel_code<W>(want, c, bits_, signed_);
            if (g != e) {
                const int pixel = px + (pack_ > 1 ? c / channels_ : 0), channel = pack_ > 1 ? c % channels_ : base + c;
                std::printf("MISMATCH %s frame %d pixel %d channel %d: expected %ld, got %ld\n", name_, frame, pixel,
                            channel, e, g);
                return;
            }
        }
        std::printf("MISMATCH %s frame %d pixel %d: padding bits above the last channel differ\n", name_, frame, px);
    }

    const char* name_;
    int beats_, channels_, fold_, pack_, folds_, bits_;
    bool signed_;
    long compared_, bad_;
    std::vector<ap_uint<W> > expected_;
};

template <int W>
int summary(hls::stream<ap_uint<W> >& in, int frames, long beats, long bad) {
    long left = 0;
    while (!in.empty()) {
        in.read();
        left++;
    }
    if (left) std::printf("FAIL: the top function left %ld input beats unread\n", left);
    if (bad || left) {
        std::printf("FAIL: %ld of %ld output beats differ from the golden model\n", bad, beats);
        return 1;
    }
    std::printf("PASS: %d frames, %ld output beats, all bit-exact\n", frames, beats);
    return 0;
}

// The vectors folder: argv[1]. The Vitis scripts pass it (csim.argv / -argv, the folder they copy
// with tb.file / add_files -tb); there is no search of parent folders, so a stale "vectors" folder
// elsewhere is never picked up by accident.
inline std::string find_vectors(int argc, char** argv) {
    return argc > 1 ? std::string(argv[1]) : std::string();
}

}  // namespace hlsgen_tb

#endif
