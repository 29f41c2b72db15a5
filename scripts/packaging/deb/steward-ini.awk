# Turns config/steward.ini into the packaged /etc/steward/steward.ini: the packaged paths, the database password
# as the unit's credential, and every project-specific example commented out (the file passes config check as is).
BEGIN {
    print "; /etc/steward/steward.ini, installed by the steward package (see steward.ini(5)). Kept on upgrades when edited."
    print "; Set [database] url, put the password in /etc/steward/database-password (mode 600), then:"
    print ";   steward config check --config /etc/steward/steward.ini && systemctl enable --now steward"
    print ";"
}
/^\[/ { section = $0 }
section == "[database]" && /^url *=/ { print "; " $0; next }
section == "[database]" && /^password_file *=/ { print "password_file = credential:database-password"; next }
section == "[migrations]" && /^dir *=/ { print "dir = /usr/share/steward/migrations"; next }
section == "[migrations]" && /^include *=/ { print "include = /usr/share/steward/optional/username-enforcement"; next }
section == "[metrics]" && /^textfile *=/ { print "; " $0; next }
section == "[daemon]" && /^host *=/ { print "; " $0; next }
section == "[job.username-check]" && /^reserved_file *=/ { print "reserved_file = /usr/share/steward/reserved-usernames.txt"; next }
(section == "[storage]" || section == "[apple]") && /^[a-z_]+ *=/ { print "; " $0; next }
{ print }
