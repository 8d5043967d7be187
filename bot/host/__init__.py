"""What the service knows of the machine it runs on: the database and the disk failing, told
apart (storage), one running service per mailbox (instance), the systemd unit it runs as (unit).

Below the service and the composition root, which meet these every day; the operator's tools
(bot.ops) sit above them and use them too."""
