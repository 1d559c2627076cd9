while [ ! -e /var/tmp/s32/stopstat ]; do echo "$(date +%s) $(head -3 /proc/stat | tr '\n' ' ')" >> /var/tmp/s32/stat.log; sleep 5; done
