// Package gpusim is the module root; the program is cmd/gpusim. The test in
// this folder keeps the package layering of STYLE.md true.
package gpusim
