# bash completion for syncprof(8): options (read from --help, so they never
# drift: --children, --per-process and the rest), their choices, PIDs for
# --pid (also after a comma: --pid 12,34), commands after --.
_syncprof()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i

	# After "--" the words belong to the launched command.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			if ((i == COMP_CWORD - 1)); then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return
		fi
	done
	case $prev in
	-p|--pid)
		# A list: PID,PID,... completes its last element.
		local head=
		[[ $cur == *,* ]] && head=${cur%,*},
		COMPREPLY=($(compgen -P "$head" -W "$(cd /proc && printf '%s\n' [0-9]*)" \
			-- "${cur##*,}"))
		return ;;
	--mode) COMPREPLY=($(compgen -W "contended full" -- "$cur")); return ;;
	-s|--sort) COMPREPLY=($(compgen -W "total mean max count" -- "$cur")); return ;;
	-f|--format) COMPREPLY=($(compgen -W "$(_syncprof_choices format)" -- "$cur")); return ;;
	--callsite) COMPREPLY=($(compgen -W "line func both" -- "$cur")); return ;;
	--probe-at) COMPREPLY=($(compgen -W "auto entry" -- "$cur")); return ;;
	--type) COMPREPLY=($(compgen -W "lock event mutex rec_mutex condvar rwlock-r rwlock-w sem libc-lock futex barrier spinlock join park poll io sleep child flock syscall fault" -- "$cur")); return ;;
	--tid)
		# The threads of the --pid given before, else every task.
		local pid=
		for ((i = 1; i < COMP_CWORD - 1; i++)); do
			[[ ${COMP_WORDS[i]} == -p || ${COMP_WORDS[i]} == --pid ]] &&
				pid=${COMP_WORDS[i+1]}
		done
		if [[ -n $pid && -d /proc/$pid/task ]]; then
			COMPREPLY=($(compgen -W "$(cd /proc/$pid/task && printf '%s\n' [0-9]*)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(cd /proc && printf '%s\n' [0-9]*)" -- "$cur"))
		fi
		return ;;
	-o|--output|--chrome|--states-csv) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--record|--replay) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	-N|--top|--map-size|--ring-size|--stack-depth|--skip|--object|--max-series|--ready-fd) return ;;
	# One DURATION rule for all three: seconds, or a number and a unit.
	-d|--duration|-i|--interval) COMPREPLY=($(compgen -W "1 5 10 30 500ms 1m" -- "$cur")); return ;;
	--serve) COMPREPLY=($(compgen -W "127.0.0.1:9465 0.0.0.0:9465 9465" -- "$cur")); return ;;
	--min-wait) COMPREPLY=($(compgen -W "100us 1ms 10ms 100ms 1" -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" --help 2>/dev/null |
			grep -o -- '--[a-z][a-z-]*' | sort -u) --" -- "$cur"))
	fi
}

# The choices --help gives for an option: "table (default) | csv | json".
_syncprof_choices()
{
	"${COMP_WORDS[0]}" --help 2>/dev/null |
		sed -n "s/.*--$1=[A-Z]* *\(.*\)/\1/p" | tr -d '|' |
		sed 's/([^)]*)//g'
}
complete -F _syncprof syncprof
