#!/usr/bin/env bash
# A multilang bolt in bash (squall speaks Storm's protocol, which is language-neutral): emits
# each tuple's word upper-cased with this process's pid, anchored to the tuple, then acks it.
# Some words make it misbehave or use more of the protocol, on purpose
# (tests/integration/test_multilang.py).
respond() { printf '%s\nend\n' "$1"; }
read_message() {
  msg=""
  while IFS= read -r line; do
    [[ $line == end ]] && return 0
    msg+="$line"
  done
  return 1
}
read_message || exit 0
[[ $msg =~ \"pidDir\":\"([^\"]*)\" ]] && : >"${BASH_REMATCH[1]}/$$"
[[ $msg =~ \"context\":(\{.*\}),\"pidDir\" ]] && context=${BASH_REMATCH[1]//\"/\\\"}
respond "{\"pid\":$$}"
while read_message; do
  [[ $msg =~ \"id\":\"([^\"]*)\" ]] || continue
  id=${BASH_REMATCH[1]}
  if [[ $msg == *'"stream":"__heartbeat"'* ]]; then
    respond '{"command":"sync"}'
    continue
  fi
  [[ $msg =~ \"tuple\":\[\"([^\"]*)\" ]]
  word=${BASH_REMATCH[1]}
  case $word in
    garbage) respond 'this is not json' ;;                      # malformed
    disorder) respond "{\"command\":\"ack\",\"id\":\"not-$id\"}" ;; # out of order
    hang) exec sleep 600 ;;                                      # never answers
    die) exit 3 ;;
    tasks)  # need_task_ids: the worker answers with the tasks the tuple went to
      respond "{\"command\":\"emit\",\"tuple\":[\"TASKS\",$$]}"
      read_message
      respond "{\"command\":\"emit\",\"tuple\":[\"$msg\",$$],\"need_task_ids\":false}"
      respond "{\"command\":\"ack\",\"id\":\"$id\"}"
      ;;
    context)  # the handshake's context, as a string
      respond "{\"command\":\"emit\",\"tuple\":[\"$context\",$$],\"need_task_ids\":false}"
      respond "{\"command\":\"ack\",\"id\":\"$id\"}"
      ;;
    report)  # reportError, then the tuple succeeds
      respond '{"command":"error","msg":"something to report"}'
      respond '{"command":"metrics","name":"reports","params":1}'
      respond "{\"command\":\"ack\",\"id\":\"$id\"}"
      ;;
    failme)
      echo "failing $id on purpose" >&2
      respond "{\"command\":\"fail\",\"id\":\"$id\"}"
      ;;
    *)
      respond "{\"command\":\"log\",\"msg\":\"upper-casing $word\",\"level\":1}"
      respond "{\"command\":\"emit\",\"anchors\":[\"$id\"],\"tuple\":[\"${word^^}\",$$],\"need_task_ids\":false}"
      respond "{\"command\":\"ack\",\"id\":\"$id\"}"
      ;;
  esac
done
