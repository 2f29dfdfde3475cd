#!/usr/bin/env bash
# Checks payonce's protocol models with spin: the models as they are must check clean, and each
# deliberately broken variant must fail the property it breaks, with its counterexample written
# beside the run. Needs spin and gcc (Debian packages spin and gcc). Opt-in: not part of README's
# test command (./mvnw verify -Pmodels runs it after the tests).
#   model/check.sh           check, into target/model/
#   model/check.sh --save    and copy the counterexamples to model/counterexamples/ (for readers)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/target/model
save=0
[ "${1:-}" = "--save" ] && save=1
command -v spin >/dev/null && command -v gcc >/dev/null || { echo "model: spin and gcc are needed (apt-get install spin gcc)" >&2; exit 2; }
rm -rf "$out" && mkdir -p "$out/counterexamples"
failures=0

# One verification: a name, the model, the property (an ltl claim, or "deadlock": no claim, so
# that every reachable state where nothing can move and some process is not at an end counts as an
# error), what must come out (clean, or the text of the violation a broken variant must show), then
# the -D flags; each flag goes to spin and to the compiler alike. Weak fairness for the liveness
# claims (answers*, settles, flows); breadth-first search for the safety claims of broken variants, so
# that their counterexamples are the shortest there are. A search that did not complete (depth or
# memory) is never clean. It prints its verdict and returns non-zero when it is not as it must be.
check() {
    local name=$1 model=$2 claim=$3 expect=$4; shift 4
    local dir=$out/$name defines=("$@") depth=-m200000 pan_flags cc_flags=(-O2 -DNFAIR=4 -DMEMLIM=4096)
    mkdir -p "$dir" && cp "model/$model" "$dir/"
    case "$claim" in
        # A broken variant's liveness counterexample is looked for within 1,000 steps first, where
        # it is short enough to read; the full depth is searched only if none is found there.
        answers*|settles|flows) pan_flags=(-a -f); cc_flags+=(-DCOLLAPSE); [ "$expect" != clean ] && depth=-m1000 ;;
        deadlock) pan_flags=(); cc_flags+=(-DCOLLAPSE -DNOCLAIM) ;;
        *) if [ "$expect" != clean ]; then cc_flags+=(-DBFS); pan_flags=(); else pan_flags=(-a); cc_flags+=(-DCOLLAPSE); fi ;;
    esac
    local started result errors states milliseconds
    started=$(date +%s%N)
    (cd "$dir" && spin "${defines[@]}" -a "$model" >spin.log 2>&1 && gcc "${cc_flags[@]}" "${defines[@]}" -o pan pan.c 2>>spin.log) \
        || { echo "model: $name: spin or gcc failed, see $dir/spin.log" >&2; return 1; }
    local select=(-N "$claim")
    [ "$claim" = deadlock ] && select=()
    result=$(cd "$dir" && ./pan "${pan_flags[@]}" "$depth" "${select[@]}" 2>&1 || true)
    if [ "$expect" != clean ] && echo "$result" | grep -q 'errors: 0'; then
        result=$(cd "$dir" && ./pan "${pan_flags[@]}" -m200000 "${select[@]}" 2>&1 || true)
    fi
    milliseconds=$(( ($(date +%s%N) - started) / 1000000 ))
    echo "$result" >"$dir/pan.log"
    errors=$(echo "$result" | sed -n 's/.*errors: \([0-9]*\).*/\1/p' | head -1)
    states=$(echo "$result" | sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' | head -1)
    if [ -z "$errors" ]; then
        echo "model: $name: no verdict, see $dir/pan.log" >&2; return 1
    fi
    if [ "$expect" = clean ] && echo "$result" | grep -q 'max search depth too small\|out of memory\|MEMLIM\|Search not completed'; then
        echo "model: $name: the search did not complete, see $dir/pan.log" >&2; return 1
    fi
    if [ "$expect" = clean ] && [ "$errors" = 0 ]; then
        printf 'model: %-34s %-14s clean: %s states, %d ms\n' "$name" "$claim" "$states" "$milliseconds"
    elif [ "$expect" != clean ] && [ "$errors" != 0 ] && echo "$result" | grep -qF "$expect"; then
        (cd "$dir" && spin "${defines[@]}" -t -p -g "$model" >"$out/counterexamples/$name.txt" 2>&1)
        printf 'model: %-34s %-14s fails, as it must: %s (step %s)\n' "$name" "$claim" "$expect" \
            "$(grep -o '^ *[0-9]*:	proc' "$out/counterexamples/$name.txt" | tail -1 | tr -dc 0-9)"
    else
        echo "model: $name: $claim expected $expect, got $errors errors; see $dir/pan.log" >&2
        return 1
    fi
}

# Two verifications run at a time, one per core (each pan stays under MEMLIM, 4 GiB); their verdicts
# are printed in the order they are listed, once all have ended.
names=()
running=0
verify() {
    if [ "$running" -ge 2 ]; then wait -n || true; running=$((running - 1)); fi
    names+=("$1")
    (check "$@" >"$out/$1.verdict" 2>&1; echo $? >"$out/$1.status") &
    running=$((running + 1))
}

# The models as they are.
verify pay                       pay.pml        safety         clean
verify pay-one-click             pay.pml        answers        clean -DONE_CLICK
verify pay-double-click          pay.pml        answers_a      clean -DNO_B
verify card                      card.pml       charged_once   clean
verify card-liveness             card.pml       settles        clean
verify statements                statements.pml money          clean
verify statements-card           statements.pml money          clean -DCARD -DNO_STALL
verify statements-card-close     statements.pml money          clean -DCARD -DNO_B -DAUTO_CLOSE
verify statements-stall          statements.pml answers_a      clean -DLIVENESS -DNO_B
verify statements-card-liveness  statements.pml answers        clean -DLIVENESS -DCARD -DNO_B
verify broker                    broker.pml     once           clean
verify broker-liveness           broker.pml     settles        clean
verify lock                      lock.pml       own_lock       clean
verify outbox                    outbox.pml     blame          clean
verify outbox-liveness           outbox.pml     flows          clean
verify statements-card-deadlock  statements.pml deadlock       clean -DCARD -DNO_B -DAUTO_CLOSE
verify statements-pipelined      statements.pml money          clean -DPIPELINED -DONE_CLICK
verify statements-pipelined-twins statements.pml money          clean -DPIPELINED -DNO_B
verify statements-pipelined-stall statements.pml answers_a      clean -DLIVENESS -DNO_B -DPIPELINED
verify statements-pipelined-card-liveness statements.pml answers clean -DLIVENESS -DCARD -DNO_B -DPIPELINED
# Each broken variant, and the violation it must show.
verify no-claim-in-transaction   pay.pml        answers        'acceptance cycle' -DONE_CLICK -DNO_CLAIM_IN_TX
verify lock-released-by-anyone   pay.pml        safety         'assertion violated ((lockOwner==me)' -DONE_CLICK -DRELEASE_BY_ANYONE
verify cas-without-expected      pay.pml        safety         'assertion violated  !( !(((debits<=1)' -DONE_CLICK -DCAS_WITHOUT_EXPECTED
verify processor-fresh-key       card.pml       charged_once   'assertion violated  !( !(((((charges<=1)' -DFRESH_PROCESSOR_KEY
verify settle-without-expected   card.pml       charged_once   'assertion violated  !( !(((((charges<=1)' -DSETTLE_WITHOUT_EXPECTED
verify debit-from-snapshot       statements.pml covered        'assertion violated  !( !((balance>=0)))' -DONE_CLICK -DDEBIT_FROM_SNAPSHOT
verify refusal-overwrites        statements.pml money          'assertion violated (answer==firstAnswer[key])' -DNO_B -DREFUSAL_OVERWRITES
verify pending-as-refusal        statements.pml refusals_true  'assertion violated  !( !( !(refusedPayable)))' -DCARD -DNO_B -DPENDING_AS_REFUSAL
verify payment-before-order      statements.pml refusals_true  'assertion violated  !( !( !(refusedPayable)))' -DCARD -DNO_STALL -DPAYMENT_BEFORE_ORDER
verify pipelined-under-begin    statements.pml money          'assertion violated  !( !(((((((balance>=0)' -DPIPELINED -DPIPELINE_UNDER_BEGIN
verify commit-unchecked          statements.pml money          'assertion violated  !( !(((((((balance>=0)' -DPIPELINED -DCOMMIT_UNCHECKED
verify lost-commit-as-done       statements.pml money          'assertion violated ((answer!=201)||(orderStatus[' -DPIPELINED -DLOST_COMMIT_AS_DONE
verify fresh-key-after-lost-commit statements.pml money        'assertion violated (answer==firstAnswer[key])' -DPIPELINED -DNO_B -DFRESH_KEY_AFTER_LOST_COMMIT
verify no-stall-bound            statements.pml answers_a      'acceptance cycle' -DLIVENESS -DNO_B -DNO_STALL_BOUND
verify key-per-delivery          broker.pml     once           'assertion violated  !( !(((debits<=1)&& !((declined&&orderPaid)))))' -DKEY_PER_DELIVERY
verify owner-per-instance        lock.pml       own_lock       'assertion violated  !( !( !(stolen)))' -DOWNER_PER_INSTANCE
verify blame-first-unconfirmed   outbox.pml     blame          'assertion violated  !( !(((( !(parked[0])' -DNAIVE_BLAME
verify nack-is-refusal           outbox.pml     blame          'assertion violated  !( !(((( !(parked[0])' -DNACK_IS_REFUSAL
verify no-parking                outbox.pml     flows          'acceptance cycle' -DNO_PARKING

wait
for name in "${names[@]}"; do
    cat "$out/$name.verdict"
    [ "$(cat "$out/$name.status")" = 0 ] || failures=$((failures + 1))
done

if [ "$save" = 1 ]; then
    mkdir -p model/counterexamples
    cp "$out"/counterexamples/*.txt model/counterexamples/
fi
[ "$failures" = 0 ] || { echo "model: $failures verifications did not come out as they must" >&2; exit 1; }
