#!/bin/bash
# split.sh NAME [KILLCONSUMER]: 2 producers + 2 consumers on a shared cluster
# (env: REQ requests per producer, CAP --queue-capacity, EXTRA more flags for every process,
# e.g. EXTRA="--queue-full block"; a PostgreSQL at 127.0.0.1:55432 and the binaries in /tmp/clbin)
set -u
NAME=$1; KILL=${2:-}
cd /tmp/clacc
/tmp/clbin/baseline redis-cluster --url-file /tmp/clacc/seeds > rc.out 2> rc.err & RC=$!
for i in $(seq 1 60); do [ -s seeds ] && break; sleep 1; done
URL=$(cat seeds)
B=/tmp/clbin/counter
PG="postgres://postgres@127.0.0.1:55432/postgres"
COMMON=(--postgres-url "$PG" --schema $NAME --redis-url "$URL" --queue-backend redis --stream-shards 6 --queue-capacity ${CAP:-65536} --modes async-compact --calibrate=false --progress-interval 0 ${EXTRA:-})
$B "${COMMON[@]}" --role producer --producer-id 0 --requests ${REQ:-60000} --concurrency 1000 --output $NAME-p0.json > $NAME-p0.log 2>&1 &
P0=$!
sleep 3
$B "${COMMON[@]}" --role producer --producer-id 1 --reuse-schema --requests ${REQ:-60000} --concurrency 1000 --output $NAME-p1.json > $NAME-p1.log 2>&1 &
P1=$!
$B "${COMMON[@]}" --role consumer --reuse-schema --output $NAME-c1.json > $NAME-c1.log 2>&1 &
C1=$!
$B "${COMMON[@]}" --role consumer --reuse-schema --verify --expect-producers 2 --output $NAME-c2.json > $NAME-c2.log 2>&1 &
C2=$!
if [ -n "$KILL" ]; then sleep $KILL; kill -9 $C1; echo "SIGKILLed consumer c1 at ${KILL}s"; fi
wait $P0; echo "p0 exit $?"; wait $P1; echo "p1 exit $?"
if [ -z "$KILL" ]; then wait $C1; echo "c1 exit $?"; fi
wait $C2; echo "c2 exit $?"
# where the shards' keys live
python3 - "$URL" <<'PY'
import sys,subprocess,re,os
u=sys.argv[1]; m=re.match(r'redis://:([^@]+)@(.*)',u); pw=m.group(1); hosts=m.group(2).split(',')
env=dict(os.environ,REDISCLI_AUTH=pw)
for h in hosts:
    host,port=h.split(':')
    out=subprocess.run(['redis-cli','-h',host,'-p',port,'--scan','--pattern','*'],capture_output=True,text=True,env=env).stdout.split()
    print(h, len(out), 'keys', sorted(k for k in out if 'shard' in k and not k.endswith((':dlq',':stats',':replies',':lease')))[:6])
PY
kill -INT $RC; wait $RC
grep -il "CROSSSLOT\|MOVED" $NAME-*.log || echo "no CROSSSLOT or MOVED in any log"
