"""Stand-ins for the services a real n8n needs to run its own agent offline.

``model_server`` is a scripted OpenAI-compatible model (``threadcase fake-model serve``) and
``sandbox`` a local stand-in for n8n's sandbox service (started by ``scripts/n8n-local start
--sandbox``). They sit beside the floors, as the demo instance does: they speak only HTTP and import
nothing else of threadcase.
"""
