#!/bin/bash
# Instructions per event of the coordinator (user space, stable where time is not):
# runs kmcts-bench-engine under callgrind and divides Coordinator::loop's inclusive
# instruction count (thread 1) by the run's events, with its main callees.
# usage: bench/engine/callgrind_per_event.sh BENCH_BINARY TAG [NODES=3000]  (results in /tmp/cgm/TAG)
BIN=$1; TAG=$2; N=${3:-3000}
D=/tmp/cgm/$TAG; rm -rf $D; mkdir -p $D
valgrind --tool=callgrind --callgrind-out-file=$D/cg.%p --separate-threads=yes $BIN --workers 8 --nodes $N --set search.exploration=1 --set search.backup=mean --skip-pipeline --max-seconds 1000 --out $D/eb.json > $D/log 2>&1
F=$(ls $D/cg.*-01)
EV=$(python3 -c "import json;print(json.load(open('$D/eb.json'))['scaling']['rows'][0]['events'])" 2>/dev/null || grep -E '^\| [0-9]' $D/log | awk -F'|' '{print $5}')
callgrind_annotate --inclusive=yes --threshold=100 $F 2>/dev/null > $D/incl.txt
LOOP=$(grep -m1 'Coordinator::loop' $D/incl.txt | awk '{print $1}' | tr -d ,)
echo "$TAG events=$EV loop_Ir=$LOOP Ir/event=$((LOOP/EV))"
for f in 'detail::apply_agent(' 'MctsStrategy::next(' 'detail::apply_evaluation(' 'State::flush(' 'detail::start_agents(' 'detail::start_evaluation(' 'MctsStrategy::on_evaluated(' 'VariantGraph::add_child(' 'StoreWriter::write(' 'StoreWriter::end_batch(' 'detail::persist_path('; do
  v=$(grep -m1 -F "$f" $D/incl.txt | awk '{print $1}' | tr -d ,); echo "  $f $((v/EV))"; done
