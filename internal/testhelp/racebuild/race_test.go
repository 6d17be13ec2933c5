//go:build race

package racebuild

const raceOn = true
