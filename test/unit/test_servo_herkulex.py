"""The HerkuleX protocol: the fact sheet's worked frames, round trips, checksums, the parser."""

import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st
import pytest

from sweetie_motion.servo import herkulex as hx

# --- the fact sheet's worked frames (section 1.3; M-p42..M-p48) ---------------------------------

WORKED = {
    'EEP_READ Kp/Kd': ('FF FF 09 FD 02 EC 12 1E 04',
                       lambda: hx.ReadRequest(hx.Memory.EEP, 0x1E, 4).frame(253)),
    'its ACK': ('FF FF 0F FD 42 4C B2 1E 04 B8 01 40 1F 00 00',
                lambda: hx.ReadReply(253, hx.Memory.EEP, 0x1E, bytes((0xB8, 0x01, 0x40, 0x1F)),
                                     hx.Status(0, 0)).frame()),
    'clear status': ('FF FF 0B FD 03 C6 38 30 02 00 00', lambda: hx.clear_errors(253)),
    'torque on': ('FF FF 0A FD 03 A0 5E 34 01 60',
                  lambda: hx.write_register(253, 'torque_control', hx.TORQUE_ON)),
    'RAM_READ LED': ('FF FF 09 FD 04 C4 3A 35 01', lambda: hx.read_register(253, 'led_control')),
    'its ACK (green, 0x00/0x42)': (
        'FF FF 0C FD 44 C2 3C 35 01 01 00 42',
        lambda: hx.ReadReply(253, hx.Memory.RAM, 0x35, b'\x01', hx.Status(0, 0x42)).frame()),
    'I_JOG 512 green 60': ('FF FF 0C FD 05 32 CC 00 02 04 FD 3C',
                           lambda: hx.IJogRequest((hx.JogTag(253, 512, led=1, playtime=60),))
                           .frame()),
    'S_JOG 60 512 green': ('FF FF 0C FD 06 30 CE 3C 00 02 04 FD',
                           lambda: hx.SJogRequest(60, (hx.JogTag(253, 512, led=1),)).frame()),
    'STAT': ('FF FF 07 FD 07 FC 02', lambda: hx.StatRequest().frame(253)),
    'STAT ACK (motor on)': ('FF FF 09 FD 47 F2 0C 00 40',
                            lambda: hx.AckReply(253, hx.Command.STAT, hx.Status(0, 0x40))
                            .frame()),
    'REBOOT broadcast': ('FF FF 07 FE 09 F0 0E', lambda: hx.RebootRequest().frame(0xFE)),
}


@pytest.mark.parametrize('name', sorted(WORKED))
def test_worked_frames_encode_byte_for_byte(name):
    expected, build = WORKED[name]
    assert build().encode() == bytes.fromhex(expected)


@pytest.mark.parametrize('name', sorted(WORKED))
def test_worked_frames_parse_back(name):
    raw = bytes.fromhex(WORKED[name][0])
    frames = hx.FrameParser().feed(raw)
    assert frames == [WORKED[name][1]()]
    frame = frames[0]
    decoded = hx.decode_reply(frame) if frame.is_reply else hx.decode_request(frame)
    rebuilt = decoded.frame() if frame.is_reply else decoded.frame(frame.pid)
    assert rebuilt.encode() == raw


def test_worked_replies_decode_to_their_values():
    reply = hx.decode_reply(hx.Frame.decode(bytes.fromhex(WORKED['its ACK'][0])))
    assert reply.value('position_kp') == 440 and reply.value('position_kd') == 8000
    led = hx.decode_reply(hx.Frame.decode(bytes.fromhex(WORKED['its ACK (green, 0x00/0x42)'][0])))
    assert led.value('led_control') == 1
    assert led.status.motor_on and led.status.in_position and led.status.describe() == 'ok'


def test_manual_s_jog_typo_reads_as_the_caption_says():
    # M-p47 example 2 prints JOG bytes 40 01, but its checksums FE/00 only fit 0x02C0 = 704
    frame = hx.SJogRequest(60, (hx.JogTag(253, 704, speed_mode=True, led=2),)).frame()
    assert frame.encode()[5:7] == b'\xfe\x00'


# --- round trips (hypothesis) -------------------------------------------------------------------

ids = st.integers(0, hx.BROADCAST_ID)
memories = st.sampled_from(list(hx.Memory))


@st.composite
def reads(draw):
    memory = draw(memories)
    address = draw(st.integers(0, memory.size - 1))
    return hx.ReadRequest(memory, address, draw(st.integers(1, memory.size - address)))


@st.composite
def writes(draw):
    memory = draw(memories)
    address = draw(st.integers(0, memory.size - 1))
    data = draw(st.binary(min_size=1, max_size=memory.size - address))
    return hx.WriteRequest(memory, address, data)


@st.composite
def tags(draw, playtime=True):
    speed = draw(st.booleans())
    value = draw(st.integers(-0x3FFF, 0x3FFF) if speed else st.integers(0, 0x7FFF))
    return hx.JogTag(draw(ids), value, speed, draw(st.integers(0, 7)), draw(st.booleans()),
                     draw(st.booleans()), draw(st.integers(0, 255)) if playtime else 0)


requests = st.one_of(
    reads(), writes(),
    st.builds(hx.IJogRequest, st.lists(tags(), min_size=1, max_size=hx.MAX_I_JOG_TAGS)
              .map(tuple)),
    st.builds(hx.SJogRequest, st.integers(0, 255),
              st.lists(tags(playtime=False), min_size=1, max_size=hx.MAX_S_JOG_TAGS).map(tuple)),
    st.just(hx.StatRequest()), st.builds(hx.RollbackRequest, st.booleans(), st.booleans()),
    st.just(hx.RebootRequest()))

statuses = st.builds(hx.Status, st.integers(0, 255), st.integers(0, 255))


@st.composite
def replies(draw):
    if draw(st.booleans()):
        memory = draw(memories)
        address = draw(st.integers(0, memory.size - 1))
        data = draw(st.binary(min_size=1, max_size=memory.size - address))
        return hx.ReadReply(draw(ids), memory, address, data, draw(statuses))
    # a read is always answered with its data: every other command gets a status-only ACK
    commands = [c for c in hx.Command if c not in (hx.Command.EEP_READ, hx.Command.RAM_READ)]
    return hx.AckReply(draw(ids), draw(st.sampled_from(commands)), draw(statuses))


def _frame_of(message, pid):
    return message.frame() if isinstance(message, (hx.ReadReply, hx.AckReply)) \
        else message.frame(pid)


@settings(max_examples=300, deadline=None)
@given(requests, ids)
def test_every_request_round_trips(request, pid):
    raw = request.frame(pid).encode()
    frames = hx.FrameParser(hx.REQUEST_COMMANDS).feed(raw)
    assert len(frames) == 1 and frames[0].pid == pid
    assert hx.decode_request(frames[0]) == request


@settings(max_examples=300, deadline=None)
@given(replies())
def test_every_reply_round_trips(reply):
    raw = reply.frame().encode()
    frames = hx.FrameParser(hx.REPLY_COMMANDS).feed(raw)
    assert len(frames) == 1
    assert hx.decode_reply(frames[0]) == reply


@settings(max_examples=200, deadline=None)
@given(requests, ids, st.data())
def test_any_chunking_gives_the_same_frames(request, pid, data):
    raw = request.frame(pid).encode() * 3
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=12)))
    parser = hx.FrameParser()
    frames = []
    last = 0
    for cut in cuts + [len(raw)]:
        frames += parser.feed(raw[last:cut])
        last = cut
    assert [hx.decode_request(f) for f in frames] == [request] * 3
    assert parser.counters.garbage_bytes == 0 and parser.pending == 0


def _detectable(position, mask):
    """Header, size and checksum bytes always; other bytes unless only bit 0 flips."""
    return position in (0, 1, 2, 5, 6) or mask & 0xFE


@settings(max_examples=500, deadline=None)
@given(st.one_of(requests.map(lambda r: r.frame(0x10)), replies().map(lambda r: r.frame())),
       st.data())
def test_single_byte_corruption_is_rejected_unless_only_bit_0_flips(frame, data):
    raw = frame.encode()
    position = data.draw(st.integers(0, len(raw) - 1))
    mask = data.draw(st.integers(1, 255))
    assume(_detectable(position, mask))
    corrupted = bytearray(raw)
    corrupted[position] ^= mask
    corrupted = bytes(corrupted)
    parser = hx.FrameParser()
    found = parser.feed(corrupted)
    while parser.pending:
        found += [f for f, _ in parser.flush()]
    # no frame may be delivered from the corrupted frame's own header
    assert not any(f.encode() == corrupted[:f.size] for f in found)
    with pytest.raises(hx.FrameError):
        hx.Frame.decode(corrupted)


@settings(max_examples=200, deadline=None)
@given(st.one_of(requests.map(lambda r: r.frame(0x10)), replies().map(lambda r: r.frame())),
       st.data())
def test_a_flip_of_bit_0_of_pid_or_data_passes_the_checksums(frame, data):
    # the documented blind spot (fact sheet 1.2): the checksums clear bit 0 of the XOR
    raw = bytearray(frame.encode())
    position = data.draw(st.sampled_from([3] + list(range(7, len(raw)))))
    raw[position] ^= 0x01
    if position == 3 and raw[3] == 0xFF:
        # the broadcast ID 254 became 255, which no frame may carry: refused all the same
        with pytest.raises(hx.FrameError):
            hx.Frame.decode(bytes(raw))
        parser = hx.FrameParser()
        assert parser.feed(bytes(raw)) == [] and parser.counters.command_errors == 1
        return
    decoded = hx.Frame.decode(bytes(raw))
    assert decoded != frame


def test_checksums_are_even_and_complementary():
    for size, pid, cmd, data in [(7, 0, 1, b''), (9, 0xFD, 0x42, b'\xff\xff'),
                                 (12, 0xFE, 6, bytes(range(5)))]:
        c1, c2 = hx.checksums(size, pid, cmd, data)
        assert c1 % 2 == 0 and c2 % 2 == 0 and c1 ^ c2 == 0xFE and c1 + c2 == 0xFE


# --- the parser: garbage, truncation, corruption ------------------------------------------------

STAT_ACK = bytes.fromhex(WORKED['STAT ACK (motor on)'][0])
READ_ACK = bytes.fromhex(WORKED['its ACK'][0])


def test_parser_skips_and_counts_garbage():
    parser = hx.FrameParser(hx.REPLY_COMMANDS)
    frames = parser.feed(b'\x00\x12\x34\xff\x99' + STAT_ACK + b'\xaa\xbb')
    assert len(frames) == 1 and frames[0].cmd == 0x47
    assert parser.counters.garbage_bytes == 7 and parser.counters.frames == 1
    assert parser.pending == 0


def test_parser_resyncs_on_runs_of_ff():
    parser = hx.FrameParser(hx.REPLY_COMMANDS)
    frames = parser.feed(b'\xff\xff\xff\xff' + READ_ACK + b'\xff\xff\xff' + STAT_ACK)
    assert [f.cmd for f in frames] == [0x42, 0x47]
    assert parser.counters.garbage_bytes == 7


def test_truncated_frame_followed_by_a_good_one():
    parser = hx.FrameParser(hx.REPLY_COMMANDS)
    frames = parser.feed(READ_ACK[:9] + STAT_ACK + READ_ACK)
    # the cut read ACK swallows the STAT ACK until its checksum fails; both good ones come out
    assert [f.cmd for f in frames] == [0x47, 0x42]
    assert parser.counters.checksum_errors + parser.counters.size_errors >= 1
    assert parser.counters.garbage_bytes == 9


def test_corrupted_frame_between_good_ones_costs_only_itself():
    bad = bytearray(READ_ACK)
    bad[10] ^= 0x40
    parser = hx.FrameParser(hx.REPLY_COMMANDS)
    frames = parser.feed(STAT_ACK + bytes(bad) + STAT_ACK)
    assert len(frames) == 2
    assert parser.counters.checksum_errors == 1
    assert parser.counters.garbage_bytes == len(READ_ACK)


def test_a_corrupted_size_is_rejected_before_the_bytes_it_claims():
    bad = bytearray(READ_ACK)
    bad[2] = 200     # the read ACK says 11 + 4 bytes: the parser knows at once
    parser = hx.FrameParser(hx.REPLY_COMMANDS)
    assert parser.feed(bytes(bad) + STAT_ACK) == [hx.Frame.decode(STAT_ACK)]
    assert parser.counters.size_errors == 1


def test_flush_frees_frames_stuck_behind_an_unknown_command_candidate():
    # an unknown CMD carries no size rule: the parser waits for its 100 bytes
    parser = hx.FrameParser()
    stuck = bytes((0xFF, 0xFF, 100, 1, 0x33, 0x10, 0xEE))
    assert parser.feed(stuck + STAT_ACK) == []
    assert [f for f, _ in parser.flush()] == [hx.Frame.decode(STAT_ACK)]


def test_master_parser_rejects_requests_at_the_command_byte():
    parser = hx.FrameParser(hx.REPLY_COMMANDS)
    assert parser.feed(bytes.fromhex(WORKED['STAT'][0])) == []
    assert parser.counters.command_errors == 1


def test_offsets_tell_where_each_frame_ended():
    parser = hx.FrameParser()
    pairs = parser.feed_with_offsets(b'\x00' + STAT_ACK + READ_ACK)
    assert [n for _, n in pairs] == [1 + len(STAT_ACK), 1 + len(STAT_ACK) + len(READ_ACK)]


# --- requests refuse bad values -----------------------------------------------------------------

@pytest.mark.parametrize('build, name', [
    (lambda: hx.ReadRequest(hx.Memory.RAM, 70, 10).frame(1), 'length'),
    (lambda: hx.ReadRequest(hx.Memory.EEP, 54, 1).frame(1), 'address'),
    (lambda: hx.StatRequest().frame(255), 'servo ID'),
    (lambda: hx.JogTag(1, 1024 * 32), 'JOG position'),
    (lambda: hx.JogTag(1, 20000, speed_mode=True), 'JOG speed'),
    (lambda: hx.SJogRequest(256, (hx.JogTag(1, 0),)).frame(), 'playtime'),
    (lambda: hx.SJogRequest(1, tuple(hx.JogTag(k, 0) for k in range(54))).frame(),
     'S_JOG tag count'),
    (lambda: hx.write_register(1, 'max_position', 70000), 'max_position'),
])
def test_out_of_range_values_name_the_field(build, name):
    with pytest.raises(hx.ValueRangeError) as info:
        build()
    assert info.value.name == name


def test_read_only_and_unknown_registers_are_refused():
    with pytest.raises(hx.HerkulexError, match='read-only'):
        hx.write_register(1, 'absolute_position', 3)
    with pytest.raises(hx.UnknownRegisterError, match='torque_control'):
        hx.register('torque')


def test_decode_request_refuses_malformed_data():
    with pytest.raises(hx.UnknownCommandError):
        hx.decode_request(hx.Frame(1, 0x0A))
    with pytest.raises(hx.FrameError, match='length byte'):
        hx.decode_request(hx.Frame(1, hx.Command.RAM_WRITE, b'\x34\x05\x60'))
    with pytest.raises(hx.FrameError, match='5-byte tags'):
        hx.decode_request(hx.Frame(1, hx.Command.I_JOG, b'\x00\x02\x04'))


# --- the register map ---------------------------------------------------------------------------

def test_register_map_follows_the_trusted_addresses():
    # fact sheet 4.4: the RAM map (M-p25) wins over the shifted detail table (M-p29)
    expected = {'calibrated_position': 58, 'absolute_position': 60, 'differential_position': 62,
                'pwm': 64, 'absolute_goal_position': 68,
                'absolute_desired_trajectory_position': 70, 'desired_velocity': 72,
                'current_control_mode': 56, 'torque_control': 52, 'status_error': 48,
                'min_position': 20, 'max_position': 22, 'ack_policy': 1, 'id': 0}
    assert {name: hx.register(name).ram for name in expected} == expected
    assert hx.register('min_position').eep == 26 and hx.register('baud_rate').ram is None


@pytest.mark.parametrize('memory', list(hx.Memory))
def test_registers_do_not_overlap(memory):
    used = {}
    for reg in hx.REGISTER_LIST:
        address = reg.eep if memory is hx.Memory.EEP else reg.ram
        if address is None:
            continue
        for byte in range(address, address + reg.size):
            assert byte < memory.size
            assert byte not in used, f'{reg.name} overlaps {used.get(byte)}'
            used[byte] = reg.name


def test_factory_memory_and_boot():
    eep = hx.factory_eep(0x02)
    assert len(eep) == 54 and eep[0] == 0x02 and eep[6] == 0xFD and eep[7] == 1
    assert eep[30] | eep[31] << 8 == 440 and eep[26] | eep[27] << 8 == 21
    ram = hx.ram_from_eep(eep)
    assert len(ram) == 74 and ram[0] == 0xFD and ram[3] == 0x35 and ram[52] == 0


# --- status --------------------------------------------------------------------------------------

def test_status_bits_decode_into_named_flags():
    status = hx.Status(0x14, 0x44)
    assert status.errors == hx.StatusError.OVERLOAD | hx.StatusError.TEMPERATURE
    assert status.details == hx.StatusDetail.MOTOR_ON | hx.StatusDetail.CHECKSUM_ERROR
    assert status.names() == ['overheat', 'overload', 'checksum error']
    assert status.faults() == 0x14 and hx.Status(0x08).faults() == 0
    assert 'overload' in status.describe() and '0x14/0x44' in status.describe()


# --- units ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('model', sorted(hx.SERVO_TYPES))
def test_position_round_trip_and_range(model):
    kind = hx.servo_type(model)
    for counts in (0, 21, 511, 512, 513, 1002, 1023):
        assert kind.rad_to_position(kind.position_to_rad(counts)) == counts
    assert kind.position_to_rad(512) == 0.0
    assert kind.position_to_rad(512 + 100) == pytest.approx(math.radians(32.5))
    low, high = kind.angle_range
    with pytest.raises(hx.ValueRangeError) as info:
        kind.rad_to_position(high + 0.01)
    assert info.value.limit == (low, high)
    assert kind.rad_to_position(high + 1, clamp=True) == 1023
    assert kind.rad_to_position(-9, clamp=True) == 0
    with pytest.raises(hx.ValueRangeError):
        kind.rad_to_position(float('nan'), clamp=True)


def test_velocity_is_position_per_tick():
    kind = hx.servo_type('DRS-0101')
    # 1 count per 11.2 ms: the fact sheet's 29.09 deg/s with its 0.3258 deg scale
    assert math.degrees(kind.velocity_to_rad_s(1)) == pytest.approx(0.325 / 0.0112)
    assert kind.rad_s_to_velocity(kind.velocity_to_rad_s(-7)) == pytest.approx(-7)


def test_playtime_ticks():
    assert hx.seconds_to_playtime(0.672) == 60 and hx.playtime_to_seconds(60) == 0.672
    assert hx.seconds_to_playtime(5.0, clamp=True) == 255
    with pytest.raises(hx.ValueRangeError):
        hx.seconds_to_playtime(3.0)
    with pytest.raises(hx.ValueRangeError):
        hx.seconds_to_playtime(-0.1)


def test_baud_codes_and_models():
    assert hx.baud_code(115200) == 0x10 and hx.baud_code(666666) == 0x02
    with pytest.raises(hx.ValueRangeError):
        hx.baud_code(9600)
    assert hx.servo_type_of(0x02).name == 'DRS-0201' and hx.servo_type_of(7) is None
    with pytest.raises(hx.UnknownServoTypeError, match='DRS-0401'):
        hx.servo_type('DRS-0401')


def test_a_broadcast_frame_whose_id_bit_0_flipped_is_counted_not_raised():
    # a noisy line turns 0xFE into 0xFF past both checksums: the parser must count the frame
    # as bad and go on (a ValueRangeError here would end the reader), the next frame intact
    good = hx.Frame(hx.BROADCAST_ID, 0x06, bytes(5)).encode()
    bad = bytearray(good)
    bad[3] ^= 0x01
    parser = hx.FrameParser()
    assert parser.feed(bytes(bad) + good) == [hx.Frame.decode(good)]
    assert parser.counters.command_errors == 1
