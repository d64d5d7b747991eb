//! Tables for containers given the host, infrastructure teardown, erased
//! traces and persistence: each harmful shape caught by its rule, each
//! everyday use of the same program passing. The commands are data handed to
//! the judge; nothing here runs them.

use super::exec_tests::{Row, check_rows};
use crate::model::Decision::{Allow, Ask, Deny};

const CONTAINERS: &[Row] = &[
    ("a privileged container", "docker run --privileged -it ubuntu bash", Deny, "exec.container-escape"),
    ("the host's root mounted", "docker run -v /:/host alpine chroot /host", Deny, "exec.container-escape"),
    ("the host's root mounted read-only still shows it", "docker run -v /:/h:ro alpine", Deny, "exec.container-escape"),
    ("a long volume option with =", "podman run --volume=/etc:/etc alpine", Deny, "exec.container-escape"),
    ("the docker socket mounted", "docker run -v /var/run/docker.sock:/s docker", Deny, "exec.container-escape"),
    (
        "a mount option with source=/",
        "docker run --mount type=bind,source=/,target=/h x",
        Deny,
        "exec.container-escape",
    ),
    ("the host's processes shared", "docker run --pid=host alpine nsenter -t 1 -m sh", Deny, "exec.container-escape"),
    ("a host-reaching capability", "docker run --cap-add SYS_ADMIN alpine", Deny, "exec.container-escape"),
    ("a volume in a short-option cluster", "docker run -itv /:/mnt alpine", Deny, "exec.container-escape"),
    ("docker container run is docker run", "docker container run --privileged x", Deny, "exec.container-escape"),
    ("under sudo", "sudo docker run -v /:/host alpine", Deny, "exec.container-escape"),
    ("after global options", "docker -H tcp://10.0.0.5:2375 run -v /:/h x", Deny, "exec.container-escape"),
    ("privileged set to true", "docker run --privileged=true x", Deny, "exec.container-escape"),
    ("a trailing slash on the host path", "docker run -v /etc/:/x alpine", Deny, "exec.container-escape"),
    ("inside bash -c", "bash -c 'docker run -v /:/host alpine'", Deny, "exec.container-escape"),
    ("privileged set to false passes", "docker run --privileged=false alpine true", Allow, "tools.allow"),
    ("the workspace mounted passes", "docker run --rm -v \"$PWD\":/app -w /app node:20 npm test", Allow, "tools.allow"),
    ("a relative volume passes", "docker run -v ./data:/data postgres", Allow, "tools.allow"),
    ("a named volume passes", "docker run -v pgdata:/var/lib/postgresql/data postgres", Allow, "tools.allow"),
    ("listing containers passes", "docker ps -a", Allow, "tools.allow"),
    (
        "privileged after an entrypoint, which takes a value",
        "docker run --entrypoint sh --privileged alpine -c id",
        Deny,
        "exec.container-escape",
    ),
    ("a volume written against its option", "docker run -v/:/host alpine", Deny, "exec.container-escape"),
    ("a volume after = on its short option", "docker run -v=/:/host alpine", Deny, "exec.container-escape"),
    ("a volume at the end of a cluster, attached", "docker run -itv/etc:/x alpine", Deny, "exec.container-escape"),
    (
        "a word only known at run time keeps its place before privileged",
        "docker run -v \"$SRC\":/src --privileged alpine",
        Deny,
        "exec.container-escape",
    ),
    (
        "options that take values before it",
        "docker run -e A=1 -w /app --name x -p 80:80 -v /:/h img",
        Deny,
        "exec.container-escape",
    ),
    ("privileged on exec", "docker exec --privileged web sh", Deny, "exec.container-escape"),
    ("a host disk handed over", "docker run --device /dev/sda:/dev/xvda alpine", Deny, "exec.container-escape"),
    ("the host's memory handed over", "podman run --device=/dev/mem alpine", Deny, "exec.container-escape"),
    ("reading any host file by handle", "docker run --cap-add=dac_read_search alpine", Deny, "exec.container-escape"),
    (
        "ptrace by its full name",
        "docker run --cap-add CAP_SYS_PTRACE --pid=container:x alpine",
        Deny,
        "exec.container-escape",
    ),
    ("a sound device passes", "docker run --device /dev/snd alpine", Allow, "tools.allow"),
    ("a GPU device passes", "docker run --device=/dev/dri/renderD128 img", Allow, "tools.allow"),
    ("a harmless capability passes", "docker run --cap-add NET_BIND_SERVICE nginx", Allow, "tools.allow"),
    (
        "an entrypoint named like an option's value passes",
        "docker run --entrypoint /bin/true alpine",
        Allow,
        "tools.allow",
    ),
    ("a cluster with a workdir value passes", "docker run -itw /app node:20 npm test", Allow, "tools.allow"),
    (
        "an option this table does not know takes a value",
        "docker run --pids-limit 100 --privileged alpine",
        Deny,
        "exec.container-escape",
    ),
    (
        "a podman option that takes a value",
        "podman run --arch arm64 --privileged alpine",
        Deny,
        "exec.container-escape",
    ),
    (
        "a sysctl before a host mount",
        "docker run --sysctl net.ipv4.ip_forward=1 -v /:/h alpine",
        Deny,
        "exec.container-escape",
    ),
    ("the root written with a dot", "docker run -v /.:/h alpine", Deny, "exec.container-escape"),
    ("the root written with two slashes", "docker run -v //:/h alpine", Deny, "exec.container-escape"),
    ("the root reached through ..", "docker run -v /etc/../:/h alpine", Deny, "exec.container-escape"),
    ("/etc reached through /tmp/..", "docker run -v /tmp/../etc:/o alpine", Deny, "exec.container-escape"),
    ("the host's root seen through init", "docker run -v /proc/1/root:/h alpine", Deny, "exec.container-escape"),
    ("a cron folder of the host", "docker run -v /etc/cron.d:/h alpine", Deny, "exec.container-escape"),
    ("root's keys", "docker run -v /root/.ssh:/h alpine", Deny, "exec.container-escape"),
    ("the engine's state", "docker run -v /var/lib/docker:/h alpine", Deny, "exec.container-escape"),
    ("the folder of the runtime sockets", "docker run -v /run:/r alpine", Deny, "exec.container-escape"),
    ("a rootless engine's socket", "docker run -v /run/user/1000/docker.sock:/s alpine", Deny, "exec.container-escape"),
    (
        "the desktop engine's socket in the home",
        "docker run -v ~/.docker/run/docker.sock:/s alpine",
        Deny,
        "exec.container-escape",
    ),
    (
        "a socket path with a doubled slash",
        "docker run -v /var/run//docker.sock:/s alpine",
        Deny,
        "exec.container-escape",
    ),
    ("the engine's API socket by its flag", "docker run --use-api-socket alpine", Deny, "exec.container-escape"),
    ("the whole home", "docker run -v ~:/h alpine", Deny, "exec.container-escape"),
    ("the whole home by its variable", "docker run -v $HOME:/h alpine", Deny, "exec.container-escape"),
    ("a user's whole home", "docker run -v /home/ada:/h alpine", Deny, "exec.container-escape"),
    (
        "a mount source key in capitals",
        "docker run --mount type=bind,SOURCE=/,target=/h alpine",
        Deny,
        "exec.container-escape",
    ),
    (
        "a mount source field in quotes",
        "docker run --mount 'type=bind,\"source=/\",target=/h' alpine",
        Deny,
        "exec.container-escape",
    ),
    (
        "a local volume bound to the root",
        "docker run --mount type=volume,dst=/h,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/ alpine",
        Deny,
        "exec.container-escape",
    ),
    (
        "capabilities listed with a comma",
        "podman run --cap-add=NET_ADMIN,SYS_ADMIN alpine",
        Deny,
        "exec.container-escape",
    ),
    ("a disk by its id", "docker run --device /dev/disk/by-id/nvme-x alpine", Deny, "exec.container-escape"),
    ("a SCSI generic device", "docker run --device /dev/sg0 alpine", Deny, "exec.container-escape"),
    ("a device path written with a dot", "docker run --device /dev/./sda alpine", Deny, "exec.container-escape"),
    ("every block device allowed", "docker run --device-cgroup-rule='a *:* rwm' alpine", Deny, "exec.container-escape"),
    ("a run-time word before the image", "docker run $X alpine --privileged busybox", Deny, "exec.container-escape"),
    ("docker-compose run", "docker-compose run --privileged svc", Deny, "exec.container-escape"),
    ("podman-remote run", "podman-remote run -v /:/h alpine", Deny, "exec.container-escape"),
    ("an anonymous volume at a system path passes", "docker run -v /etc alpine ls", Allow, "tools.allow"),
    ("privileged written as 0 passes", "docker run --privileged=0 alpine", Allow, "tools.allow"),
    ("the loop control device passes", "docker run --device /dev/loop-control alpine", Allow, "tools.allow"),
    ("the local time passes", "docker run -v /etc/localtime:/etc/localtime:ro alpine", Allow, "tools.allow"),
    ("the host's certificates pass", "docker run -v /etc/ssl/certs:/etc/ssl/certs:ro alpine", Allow, "tools.allow"),
    ("shared memory passes", "docker run -v /dev/shm:/dev/shm chrome", Allow, "tools.allow"),
    ("a project in a home passes", "docker run -v /home/ada/app:/app node:20 npm test", Allow, "tools.allow"),
    (
        "cloud credentials read-only pass",
        "docker run -v ~/.aws:/root/.aws:ro amazon/aws-cli s3 ls",
        Allow,
        "tools.allow",
    ),
    ("host logs for a shipper pass", "docker run -v /var/log:/var/log:ro fluentbit", Allow, "tools.allow"),
    ("a USB character device rule passes", "docker run --device-cgroup-rule='c 189:* rmw' img", Allow, "tools.allow"),
    (
        "a harmless capability listed with another passes",
        "podman run --cap-add=NET_ADMIN,NET_RAW img",
        Allow,
        "tools.allow",
    ),
    (
        "a flag this table knows leaves the image alone",
        "docker run --rm --init -it alpine ls -v /",
        Allow,
        "tools.allow",
    ),
    ("an image path after the image is its argument", "docker run alpine ls -v /", Allow, "tools.allow"),
    (
        "a flag this table does not know leaves the next option alone",
        "podman run --unsetenv-all --privileged alpine",
        Deny,
        "exec.container-escape",
    ),
    ("podman exec's latest as a short flag", "podman exec -l --privileged sh", Deny, "exec.container-escape"),
    (
        "a compose flag this table does not know",
        "docker compose run --quiet-build -v /:/h svc",
        Deny,
        "exec.container-escape",
    ),
    ("a root file system at the host's root", "podman run --rootfs / sh", Deny, "exec.container-escape"),
    ("a relative source climbing to the host's root", "docker run -v ..:/h alpine", Deny, "exec.container-escape"),
    ("a relative source climbing to /etc", "docker run -v ../../etc:/h alpine", Deny, "exec.container-escape"),
    ("a glob mount of the root", "podman run --mount type=glob,src=/*,dst=/h alpine", Deny, "exec.container-escape"),
    ("the desktop engine's socket folder", "docker run -v ~/.docker/run:/r alpine", Deny, "exec.container-escape"),
    ("root's crontabs", "docker run -v /var/spool/cron/crontabs:/c alpine", Deny, "exec.container-escape"),
    ("a disk by its numbers", "docker run --device /dev/block/8:0 alpine", Deny, "exec.container-escape"),
    ("the host's memory by its numbers", "docker run --device /dev/char/1:1 alpine", Deny, "exec.container-escape"),
    (
        "the password file mounted writable",
        "docker run -v /etc/passwd:/etc/passwd alpine",
        Deny,
        "exec.container-escape",
    ),
    ("a privileged box", "distrobox create -a --privileged -n box", Deny, "exec.container-escape"),
    ("a box with the host's root", "distrobox create --volume /:/h -n box", Deny, "exec.container-escape"),
    (
        "flags handed to the engine with =",
        "distrobox create --additional-flags='-v /:/h' -n box",
        Deny,
        "exec.container-escape",
    ),
    (
        "a volume made of the host's root",
        "docker volume create --driver local --opt type=none --opt o=bind --opt device=/ hostroot",
        Deny,
        "exec.container-escape",
    ),
    (
        "a volume made of /etc with short options",
        "docker volume create -o o=bind -o device=/etc v",
        Deny,
        "exec.container-escape",
    ),
    (
        "the password file read-only passes",
        "docker run -v /etc/passwd:/etc/passwd:ro -u 1000 alpine id",
        Allow,
        "tools.allow",
    ),
    (
        "the resolver read-only passes",
        "docker run -v /etc/resolv.conf:/etc/resolv.conf:ro alpine",
        Allow,
        "tools.allow",
    ),
    (
        "a read-only mount option passes",
        "docker run --mount type=bind,src=/etc/hosts,dst=/etc/hosts,readonly alpine",
        Allow,
        "tools.allow",
    ),
    ("a USB bus passes", "docker run -v /dev/bus/usb:/dev/bus/usb img", Allow, "tools.allow"),
    ("a sibling folder passes", "docker run -v ../data:/data postgres", Allow, "tools.allow"),
    ("a box of its own passes", "distrobox create -n dev -i fedora:40", Allow, "tools.allow"),
    (
        "a volume of a project folder passes",
        "docker volume create -o type=none -o o=bind -o device=/srv/data v",
        Allow,
        "tools.allow",
    ),
    ("an NFS volume passes", "docker volume create --opt type=nfs --opt device=:/export v", Allow, "tools.allow"),
    (
        "the first user's sound server passes",
        "docker run -v /run/user/1000/pulse:/run/user/1000/pulse img",
        Allow,
        "tools.allow",
    ),
];

const TEARDOWN: &[Row] = &[
    ("terraform destroy", "terraform destroy -auto-approve", Ask, "exec.infrastructure-destroy"),
    ("terraform apply -destroy", "terraform apply -destroy", Ask, "exec.infrastructure-destroy"),
    ("a kubectl delete", "kubectl delete namespace production", Ask, "exec.infrastructure-destroy"),
    ("a kubectl delete of everything", "kubectl delete pods --all -n prod", Ask, "exec.infrastructure-destroy"),
    ("a helm uninstall", "helm uninstall api -n prod", Ask, "exec.infrastructure-destroy"),
    ("an s3 bucket removed", "aws s3 rb s3://backups --force", Ask, "exec.infrastructure-destroy"),
    ("an s3 prefix emptied", "aws s3 rm s3://backups --recursive", Ask, "exec.infrastructure-destroy"),
    ("instances terminated", "aws ec2 terminate-instances --instance-ids i-1", Ask, "exec.infrastructure-destroy"),
    (
        "a database instance deleted",
        "aws rds delete-db-instance --db-instance-identifier db",
        Ask,
        "exec.infrastructure-destroy",
    ),
    ("a gcloud delete", "gcloud compute instances delete vm-1 --quiet", Ask, "exec.infrastructure-destroy"),
    ("an az delete", "az group delete --name prod --yes", Ask, "exec.infrastructure-destroy"),
    ("docker volumes pruned", "docker system prune -a --volumes -f", Ask, "exec.infrastructure-destroy"),
    ("a database dropped", "dropdb production", Ask, "exec.infrastructure-destroy"),
    ("a table dropped through psql", "psql -c 'DROP TABLE users;' prod", Ask, "exec.infrastructure-destroy"),
    ("a database dropped through mysql", "mysql -e 'drop database shop'", Ask, "exec.infrastructure-destroy"),
    ("pulumi destroy", "pulumi destroy --yes", Ask, "exec.infrastructure-destroy"),
    ("terraform plan passes", "terraform plan -out plan.bin", Allow, "tools.allow"),
    ("kubectl get passes", "kubectl get pods -n prod", Allow, "tools.allow"),
    ("an s3 copy passes", "aws s3 cp build/ s3://site/ --recursive", Allow, "tools.allow"),
    ("an s3 file removed alone passes", "aws s3 rm s3://site/old.html", Allow, "tools.allow"),
    ("describing instances passes", "aws ec2 describe-instances", Allow, "tools.allow"),
    ("a gcloud list passes", "gcloud compute instances list", Allow, "tools.allow"),
    ("a select through psql passes", "psql -c 'select count(*) from users' prod", Allow, "tools.allow"),
    ("dangling images pruned passes", "docker image prune -f", Allow, "tools.allow"),
];

const TRACES: &[Row] = &[
    ("history cleared", "history -c", Ask, "exec.erase-traces"),
    ("a history entry deleted", "history -d 42", Ask, "exec.erase-traces"),
    ("history turned off", "unset HISTFILE", Ask, "exec.erase-traces"),
    ("history sent to nowhere", "export HISTFILE=/dev/null", Ask, "exec.erase-traces"),
    ("the history file emptied", "cat /dev/null > ~/.bash_history", Ask, "exec.erase-traces"),
    ("the history file shredded", "shred -u ~/.zsh_history", Ask, "exec.erase-traces"),
    ("the history file linked to nowhere", "ln -sf /dev/null ~/.bash_history", Ask, "exec.erase-traces"),
    ("a system log emptied", "truncate -s 0 /var/log/auth.log", Ask, "exec.erase-traces"),
    ("the journal vacuumed", "journalctl --vacuum-time=1s", Ask, "exec.erase-traces"),
    ("windows event log cleared", "wevtutil cl Security", Ask, "exec.erase-traces"),
    ("history listed passes", "history 20", Allow, "tools.allow"),
    ("the journal read passes", "journalctl -u nginx --since today", Allow, "tools.allow"),
    ("a log read passes", "tail -n 50 /var/log/syslog", Allow, "tools.allow"),
];

const PERSISTENCE: &[Row] = &[
    ("a cron table installed from the input", "echo '* * * * * /tmp/x' | crontab -", Ask, "exec.persistence"),
    ("a cron table installed from a file", "crontab /tmp/jobs", Ask, "exec.persistence"),
    ("every cron job removed", "crontab -r", Ask, "exec.persistence"),
    ("a service enabled", "systemctl enable --now backdoor.service", Ask, "exec.persistence"),
    ("a launch agent loaded", "launchctl load ~/Library/LaunchAgents/x.plist", Ask, "exec.persistence"),
    ("a scheduled task created", "schtasks /create /tn x /tr c:\\x.exe /sc onlogon", Ask, "exec.persistence"),
    (
        "a logon key added",
        "reg add HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run /v x /d c:\\x.exe",
        Ask,
        "exec.persistence",
    ),
    ("a file made immutable", "chattr +i /etc/resolv.conf", Ask, "exec.persistence"),
    ("cron jobs listed passes", "crontab -l", Allow, "tools.allow"),
    ("a service's status passes", "systemctl status nginx", Allow, "tools.allow"),
    ("a service restarted passes", "systemctl restart nginx", Allow, "tools.allow"),
    ("file attributes listed passes", "lsattr /etc/resolv.conf", Allow, "tools.allow"),
];

#[test]
fn a_container_given_the_host_is_denied_and_an_ordinary_container_passes() {
    check_rows(CONTAINERS);
}

#[test]
fn tearing_down_infrastructure_is_asked_and_reading_it_passes() {
    check_rows(TEARDOWN);
}

#[test]
fn erasing_history_or_logs_is_asked_and_reading_them_passes() {
    check_rows(TRACES);
}

#[test]
fn installing_code_to_run_later_is_asked_and_looking_at_it_passes() {
    check_rows(PERSISTENCE);
}
