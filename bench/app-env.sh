# Sourced by the bench and chaos scripts: what payonce's production profile needs to start here.
# Production refuses to fall back to root with an empty password or to loopback, so the scripts name
# every store and log in as a MariaDB user of their own, limited to the database the run uses.
# Health and metrics answer on the management port, which is the HTTP port + 1000.

payonce_env() {
    local database=$1 http_port=$2
    local user=payonce_bench password=bench-only-password
    mariadb -h127.0.0.1 -uroot -e "
        CREATE USER IF NOT EXISTS '$user'@'127.0.0.1' IDENTIFIED BY '$password';
        CREATE USER IF NOT EXISTS '$user'@'localhost' IDENTIFIED BY '$password';
        GRANT ALL ON \`$database\`.* TO '$user'@'127.0.0.1';
        GRANT ALL ON \`$database\`.* TO '$user'@'localhost';"
    export PAYONCE_DB_HOST=127.0.0.1 PAYONCE_DB_USER=$user PAYONCE_DB_PASSWORD=$password PAYONCE_DB_NAME=$database \
        PAYONCE_REDIS_HOST=127.0.0.1 PAYONCE_HTTP_PORT=$http_port PAYONCE_MANAGEMENT_PORT=$((http_port + 1000))
}

management_url() { echo "http://127.0.0.1:$(($1 + 1000))"; }
