// Package multiproc holds the multi-process tests of the suites on the Redis streams backend:
// each suite's real binary (the usage-counter suite with its hand-written codec, the
// settlement suite on the default JSON one), built once, runs as producer and consumer
// processes against one PostgreSQL and one Redis (miniredis in the test process, and a real
// redis-server); consumers are SIGKILLed at exact points of their batch cycle
// ($HOTSPOTKIT_TEST_CRASH) and the run must still verify exactly. It has no code of its own
// outside the tests.
package multiproc
