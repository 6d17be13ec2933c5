// Package multiproc holds the multi-process tests of the usage-counter suite on the Redis
// streams backend: the real binary, built once, runs as producer and consumer processes
// against one PostgreSQL and one Redis (miniredis in the test process, and a real
// redis-server when one is installed); consumers are SIGKILLed at exact points of their batch
// cycle ($HOTSPOTKIT_TEST_CRASH) and the run must still verify exactly. It has no code of its
// own outside the tests.
package multiproc
