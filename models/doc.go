// Package models holds the hardware presets and cost models that topologies
// name instead of numbers: GPU models (peak FLOP/s per dtype, memory
// bandwidth, SMs, copy engines, NVLink and PCIe generation), link types
// (PCIe, NVLink, UPI, NVLink-C2C) and host defaults, each number with its
// source in a comment, plus the efficiency factors that calibration fits and
// the roofline kernel cost model.
//
// A topology YAML says what the hardware is; this package says how it
// behaves; the engine in sim knows neither and sees only resolved numbers.
//
// Sources are abbreviated: "measured.md §N" is a section of
// shared/groundtruth/measured.md, which gives the public source of each
// figure (a GitHub issue, a repository file, a datasheet).
package models
