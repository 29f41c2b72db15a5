alter table app.invitations rename to account_invitations;
alter index app.invitations_pkey rename to account_invitations_pkey;
alter function app.protect_personal() rename to keep_personal;
