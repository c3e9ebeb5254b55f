#!/usr/bin/env bash
# A multilang bolt in bash (squall's protocol is Storm's, language-neutral): emits each
# tuple's word upper-cased with this process's pid, anchored to the tuple, then acks it.
# Misbehaves on purpose: for "garbage" it writes a message that is not JSON, for "disorder"
# it acks a tuple that is not the one in process (tests/integration/test_multilang.py).
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
    garbage) respond 'this is not json' ;;
    disorder) respond "{\"command\":\"ack\",\"id\":\"not-$id\"}" ;;
    *)
      respond "{\"command\":\"log\",\"msg\":\"upper-casing $word\",\"level\":1}"
      respond "{\"command\":\"emit\",\"anchors\":[\"$id\"],\"tuple\":[\"${word^^}\",$$],\"need_task_ids\":false}"
      respond "{\"command\":\"ack\",\"id\":\"$id\"}"
      ;;
  esac
done
