// The driver of `fugue bench faust`: Faust compiles a program into this file (`faust -a
// driver.cpp`, with any of its modes: scalar, -vec, -vec -sch, -vec -omp), g++ builds it,
// and the benchmark runs it. Denormals are flushed to zero (FTZ and DAZ), as fugue does.
//
//   driver BLOCKS BLOCK RATE INPUT OUTPUT [NAME=VALUE ...]
//
// INPUT: raw 32-bit floats, interleaved, one per program input and frame ("-": silence);
// OUTPUT: the program's outputs, raw 32-bit floats, interleaved; NAME=VALUE sets the
// parameter of that path, short name or label. The timed part is the BLOCKS calls of
// compute only (the inputs are read before, the outputs written after). Prints one JSON
// object: {"ok":true,"inputs":..,"outputs":..,"blocks":..,"block":..,"compute_s":..} or
// {"ok":false,"error":".."}.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "faust/dsp/dsp.h"
#include "faust/gui/MapUI.h"
#include "faust/gui/meta.h"

// The omp mode's code calls min and max unqualified.
using std::max;
using std::min;

<<includeIntrinsic>>

<<includeclass>>

// `text` as the inside of a JSON string.
static std::string json_text(const char* text) {
    std::string s;
    for (const char* c = text; *c; c++) {
        unsigned char u = (unsigned char)*c;
        if (u == '"' || u == '\\') {
            s += '\\';
            s += char(u);
        } else if (u < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", u);
            s += esc;
        } else {
            s += char(u);
        }
    }
    return s;
}

static int fail(const char* what, const char* detail) {
    printf("{\"ok\":false,\"error\":\"%s %s\"}\n", json_text(what).c_str(),
           json_text(detail).c_str());
    return 1;
}

// MapUI that also keeps each input widget's range, so that a value outside it is refused as
// fugue's graph attributes refuse it (a bargraph, an output, has none and is not checked).
struct RangeUI : public MapUI {
    std::map<FAUSTFLOAT*, std::pair<double, double>> ranges;
    void addButton(const char* label, FAUSTFLOAT* zone) override {
        MapUI::addButton(label, zone);
        ranges[zone] = {0.0, 1.0};
    }
    void addCheckButton(const char* label, FAUSTFLOAT* zone) override {
        MapUI::addCheckButton(label, zone);
        ranges[zone] = {0.0, 1.0};
    }
    void addVerticalSlider(const char* label, FAUSTFLOAT* zone, FAUSTFLOAT init, FAUSTFLOAT lo,
                           FAUSTFLOAT hi, FAUSTFLOAT step) override {
        MapUI::addVerticalSlider(label, zone, init, lo, hi, step);
        ranges[zone] = {double(lo), double(hi)};
    }
    void addHorizontalSlider(const char* label, FAUSTFLOAT* zone, FAUSTFLOAT init, FAUSTFLOAT lo,
                             FAUSTFLOAT hi, FAUSTFLOAT step) override {
        MapUI::addHorizontalSlider(label, zone, init, lo, hi, step);
        ranges[zone] = {double(lo), double(hi)};
    }
    void addNumEntry(const char* label, FAUSTFLOAT* zone, FAUSTFLOAT init, FAUSTFLOAT lo,
                     FAUSTFLOAT hi, FAUSTFLOAT step) override {
        MapUI::addNumEntry(label, zone, init, lo, hi, step);
        ranges[zone] = {double(lo), double(hi)};
    }
};

static double seconds(const timespec& a, const timespec& b) {
    return double(b.tv_sec - a.tv_sec) + double(b.tv_nsec - a.tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
    if (argc < 6) {
        return fail("usage:", "driver BLOCKS BLOCK RATE INPUT OUTPUT [NAME=VALUE ...]");
    }
    long blocks = atol(argv[1]);
    int block = atoi(argv[2]);
    int rate = atoi(argv[3]);
    if (blocks <= 0 || blocks > 100000000 || block <= 0 || block > 65536 || rate <= 0) {
        return fail("bad arguments:", "BLOCKS, BLOCK or RATE out of range");
    }
    // Denormals flushed to zero, as on every thread that runs a fugue plan: set before the
    // instance (and the threads of -sch or -omp, which inherit the mode) exists. A decaying
    // string otherwise computes in denormals for most of a long run.
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(_mm_getcsr() | 0x8040);
#endif
    mydsp* dsp = new mydsp();
    dsp->init(rate);
    RangeUI ui;
    dsp->buildUserInterface(&ui);
    for (int i = 6; i < argc; i++) {
        std::string arg(argv[i]);
        size_t eq = arg.find('=');
        if (eq == std::string::npos) {
            return fail("not NAME=VALUE:", argv[i]);
        }
        std::string name = arg.substr(0, eq);
        FAUSTFLOAT* zone = ui.getParamZone(name);
        if (zone == nullptr) {
            return fail("no such parameter:", name.c_str());
        }
        const char* text = arg.c_str() + eq + 1;
        char* end = nullptr;
        double value = strtod(text, &end);
        if (end == text || *end != '\0' || !std::isfinite(value)) {
            return fail(("--param " + arg + ":").c_str(), "not a number");
        }
        auto range = ui.ranges.find(zone);
        // A float's rounding of a bound written in the program is let through (and clamped),
        // as fugue's `faust` node lets it through.
        double lo = range == ui.ranges.end() ? 0.0 : range->second.first;
        double hi = range == ui.ranges.end() ? 0.0 : range->second.second;
        double slack = 1e-6 * std::max(std::max(std::fabs(lo), std::fabs(hi)), 1.0);
        if (range != ui.ranges.end() && lo <= hi && (value < lo - slack || value > hi + slack)) {
            char said[160];
            snprintf(said, sizeof said, "outside the parameter's range, %g to %g",
                     range->second.first, range->second.second);
            return fail(("--param " + arg + ":").c_str(), said);
        }
        if (range != ui.ranges.end() && lo <= hi) {
            value = std::min(std::max(value, lo), hi);
        }
        ui.setParamValue(name, FAUSTFLOAT(value));
    }
    int ins = dsp->getNumInputs();
    int outs = dsp->getNumOutputs();
    size_t frames = size_t(blocks) * size_t(block);
    std::vector<float> input(size_t(ins) * frames, 0.0f);
    if (strcmp(argv[4], "-") != 0 && ins > 0) {
        FILE* f = fopen(argv[4], "rb");
        if (!f) {
            return fail("cannot open the input", argv[4]);
        }
        size_t got = fread(input.data(), sizeof(float), input.size(), f);
        fclose(f);
        if (got != input.size()) {
            return fail("the input is too short:", argv[4]);
        }
    }
    std::vector<float> output(size_t(outs) * frames, 0.0f);
    // One buffer per port and block, filled and emptied outside the timed loop.
    std::vector<std::vector<float>> in_blocks(size_t(ins) * size_t(blocks));
    for (long b = 0; b < blocks; b++) {
        for (int c = 0; c < ins; c++) {
            std::vector<float>& v = in_blocks[size_t(b) * ins + c];
            v.resize(block);
            for (int k = 0; k < block; k++) {
                v[k] = input[(size_t(b) * block + k) * ins + c];
            }
        }
    }
    std::vector<std::vector<float>> out_bufs(outs, std::vector<float>(frames));
    std::vector<float*> ip(ins > 0 ? ins : 1);
    std::vector<float*> op(outs > 0 ? outs : 1);
    timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long b = 0; b < blocks; b++) {
        for (int c = 0; c < ins; c++) {
            ip[c] = in_blocks[size_t(b) * ins + c].data();
        }
        for (int c = 0; c < outs; c++) {
            op[c] = out_bufs[c].data() + size_t(b) * block;
        }
        dsp->compute(block, ip.data(), op.data());
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (size_t k = 0; k < frames; k++) {
        for (int c = 0; c < outs; c++) {
            output[k * outs + c] = out_bufs[c][k];
        }
    }
    FILE* f = fopen(argv[5], "wb");
    if (!f || fwrite(output.data(), sizeof(float), output.size(), f) != output.size()) {
        return fail("cannot write the output", argv[5]);
    }
    fclose(f);
    printf("{\"ok\":true,\"inputs\":%d,\"outputs\":%d,\"blocks\":%ld,\"block\":%d,\"compute_s\":%.9f}\n",
           ins, outs, blocks, block, seconds(t0, t1));
    delete dsp;
    return 0;
}
