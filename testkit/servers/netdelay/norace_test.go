//go:build !race

package netdelay

const raceEnabled = false
