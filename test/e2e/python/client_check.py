"""The Kubernetes Python client, unchanged, against a test server: prints one JSON object of outcomes.

Run as `python3 client_check.py <kubeconfig>`; every step records its result or the error it met,
so the test that runs it can say which step failed and why.
"""
import json
import sys
import threading
import time

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock

config.load_kube_config(sys.argv[1])
api = client.ApiClient()
core = client.CoreV1Api(api)
ns = 'python'
out = {}


def step(name, run):
    try:
        out[name] = {'ok': run()}
    except ApiException as e:
        out[name] = {'status': e.status, 'body': json.loads(e.body) if e.body else None}
    except Exception as e:  # noqa: BLE001 - a client-side failure is an outcome too
        out[name] = {'error': f'{type(e).__name__}: {e}'}


def meta(name):
    return client.V1ObjectMeta(name=name)


step('namespaces', lambda: sorted(n.metadata.name for n in core.list_namespace().items))
step('create namespace', lambda: core.create_namespace(client.V1Namespace(metadata=meta(ns))).status.phase)
step('create configmap', lambda: core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=meta('settings'), data={'a': '1'})).data)
step('patch configmap', lambda: core.patch_namespaced_config_map('settings', ns, {'data': {'b': '2'}}).data)
step('missing configmap', lambda: core.read_namespaced_config_map('absent', ns).metadata.name)
step('core event', lambda: core.create_namespaced_event(ns, client.CoreV1Event(
    metadata=meta('started'), involved_object=client.V1ObjectReference(kind='ConfigMap', name='settings', namespace=ns),
    reason='Started', message='from python', type='Normal')).reporting_component)
step('list events', lambda: [e.reason for e in core.list_namespaced_event(ns).items])
step('lease', lambda: client.CoordinationV1Api(api).create_namespaced_lease(ns, client.V1Lease(
    metadata=meta('lock'), spec=client.V1LeaseSpec(holder_identity='python', lease_duration_seconds=15))).spec.holder_identity)
step('access review', lambda: client.AuthorizationV1Api(api).create_self_subject_access_review(client.V1SelfSubjectAccessReview(
    spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(verb='delete', resource='secrets')))).status.allowed)
step('api groups', lambda: sorted(g.name for g in client.ApisApi(api).get_api_versions().groups))
step('core resources', lambda: sorted(r.name for r in core.get_api_resources().resources))


def watched():
    events = []
    for e in watch.Watch().stream(core.list_namespaced_config_map, ns, timeout_seconds=2):
        events.append([e['type'], e['object'].metadata.name])
    return events


step('watch', watched)


def custom_resources():
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(client.V1CustomResourceDefinition(
        metadata=meta('gadgets.python.example.com'),
        spec=client.V1CustomResourceDefinitionSpec(
            group='python.example.com', scope='Namespaced', names=client.V1CustomResourceDefinitionNames(plural='gadgets', kind='Gadget'),
            versions=[client.V1CustomResourceDefinitionVersion(name='v1', served=True, storage=True, schema=client.V1CustomResourceValidation(
                open_apiv3_schema=client.V1JSONSchemaProps(type='object', properties={'spec': client.V1JSONSchemaProps(type='object', x_kubernetes_preserve_unknown_fields=True)})))])))
    for _ in range(50):
        conditions = ext.read_custom_resource_definition('gadgets.python.example.com').status.conditions or []
        if any(c.type == 'Established' and c.status == 'True' for c in conditions):
            break
        time.sleep(0.1)
    objects = client.CustomObjectsApi(api)
    objects.create_namespaced_custom_object('python.example.com', 'v1', ns, 'gadgets', {'apiVersion': 'python.example.com/v1', 'kind': 'Gadget', 'metadata': {'name': 'g1'}, 'spec': {'size': 1}})
    objects.patch_namespaced_custom_object('python.example.com', 'v1', ns, 'gadgets', 'g1', {'spec': {'color': 'red'}})
    listed = objects.list_namespaced_custom_object('python.example.com', 'v1', ns, 'gadgets')['items']
    return [[o['metadata']['name'], o['spec']] for o in listed]


step('custom resources', custom_resources)
step('dynamic leases', lambda: [l.metadata.name for l in dynamic.DynamicClient(api).resources.get(api_version='coordination.k8s.io/v1', kind='Lease').get(namespace=ns).items])


def elect():
    led = threading.Event()
    lock = ConfigMapLock('leader', ns, 'python-1')
    cfg = electionconfig.Config(lock, lease_duration=4, renew_deadline=3, retry_period=1, onstarted_leading=led.set, onstopped_leading=lambda: None)
    threading.Thread(target=leaderelection.LeaderElection(cfg).run, daemon=True).start()
    if not led.wait(10):
        return None
    record = core.read_namespaced_config_map('leader', ns).metadata.annotations['control-plane.alpha.kubernetes.io/leader']
    return json.loads(record)['holderIdentity']


step('leader election', elect)
step('delete namespace', lambda: core.delete_namespace(ns).status)
print(json.dumps(out))
