//go:build !race

package managers

// raceEnabled builds the managers with -race when the test has it.
const raceEnabled = false
