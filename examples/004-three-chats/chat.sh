# One chat's turn inside its sandbox (examples/004-three-chats/run): what it
# can see of the others, reported on stdout one fact a line. $1: its number.
i=$1
echo "secret-of-chat-$i" >"$HOME/secret.txt"
echo "home $HOME $(stat -c %a "$HOME")"
echo "note of chat $i" >/tmp/note-$i
echo "procs $(ls /proc | grep -c '^[0-9]')"
echo ready
# The host answers once all three are up: "PID:HOME:NAME ..." of the others.
read -r others
for o in $others; do
    pid=${o%%:*} rest=${o#*:}; home=${rest%%:*} name=${rest#*:}
    if kill -0 "$pid" 2>/dev/null; then echo "signal $name reached"; else echo "signal $name refused"; fi
    if cat "$home/secret.txt" 2>/dev/null; then echo "read $name reached"; else echo "read $name refused"; fi
    if grep -qs "chat.sh [^$i]" /proc/[0-9]*/cmdline; then echo "see $name yes"; else echo "see $name no"; fi
    echo "fetch $name $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$name.test:$PORT/hello.txt")"
done
echo "tmp notes: $(cd /tmp && echo note-*)"
echo "fetch own $(curl -s --max-time 5 "http://chat$i.test:$PORT/hello.txt")"
echo done
