"""dynastore's own administration: the ``/dynastore/`` HTTP endpoints (routes.py) and the ``dynastore partitions``
command (partitions_cli.py) that reads them. Not part of DynamoDB's API."""
