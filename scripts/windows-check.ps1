# SPDX-License-Identifier: LGPL-2.1-or-later
# Checks on a real Windows machine what wine cannot show (docs/windows.md):
# the low integrity level and the deleted privileges, the integrity write
# barrier on the user's files and registry, the workspace's label, the job's
# limits and its kill of the whole tree. Copy build-windows\ringfence.exe and
# build-windows\tests\windows\rf-wintest.exe into one folder, then, from an
# ordinary (not elevated) PowerShell in that folder:
#
#   powershell -ExecutionPolicy Bypass -File windows-check.ps1
#
# Prints PASS or FAIL per check; the exit code is the number of failures.
param(
    [string]$Ringfence = (Join-Path $PSScriptRoot 'ringfence.exe'),
    [string]$Helper = (Join-Path $PSScriptRoot 'rf-wintest.exe')
)
# Continue: ringfence's warnings on stderr must not stop the script.
$ErrorActionPreference = 'Continue'
$failures = 0
function Check([string]$What, [bool]$Passed, [string]$Detail = '') {
    if ($Passed) { Write-Output "PASS  $What" }
    else { Write-Output "FAIL  $What $Detail"; $script:failures++ }
}

# A workspace of our own, so the label this run gives it touches nothing else.
$ws = Join-Path $env:TEMP ("rf-check-" + [guid]::NewGuid().ToString('N').Substring(0, 8))
New-Item -ItemType Directory -Path $ws | Out-Null
Copy-Item $Helper $ws
Push-Location $ws
function Rf([string[]]$Arguments) {
    $out = & $Ringfence @Arguments 2>&1 | Out-String
    return @{ Code = $LASTEXITCODE; Out = $out }
}
$h = Join-Path $ws 'rf-wintest.exe'

try {
    $r = Rf @('run', '--', 'cmd', '/c', 'exit', '3')
    Check 'exit status comes back (3)' ($r.Code -eq 3) "got $($r.Code)"

    # The token: low integrity (RID 4096), one privilege (SeChangeNotify),
    # administrators deny-only (when the account is one).
    $r = Rf @('run', '--', $h, 'token')
    Check 'token at low integrity (4096)' ($r.Out -match 'integrity 4096') $r.Out
    Check 'privileges deleted but SeChangeNotify (1 left)' ($r.Out -match 'privileges 1\b') $r.Out
    Check 'administrators deny-only, if present' (-not ($r.Out -match 'administrators enabled')) $r.Out

    # The integrity barrier: the workspace is writable, the user's own files
    # and registry are not.
    $r = Rf @('run', '--', $h, 'write', (Join-Path $ws 'inside.txt'))
    Check 'the workspace is writable' ($r.Code -eq 0) $r.Out
    $outside = Join-Path $env:USERPROFILE ("rf-check-outside-" + [guid]::NewGuid().ToString('N') + '.txt')
    $r = Rf @('run', '--', $h, 'write', $outside)
    Check 'the user profile is not writable' ($r.Code -ne 0 -and -not (Test-Path $outside)) $r.Out
    $r = Rf @('run', '--', $h, 'write', (Join-Path $env:TEMP 'rf-check-outside.txt'))
    Check "the caller's TEMP is not writable" ($r.Code -ne 0) $r.Out
    $r = Rf @('run', '--', 'reg', 'add', 'HKCU\Software\ringfence-check', '/f')
    Check 'HKCU is not writable' ($r.Code -ne 0) $r.Out
    if ($r.Code -eq 0) { reg delete 'HKCU\Software\ringfence-check' /f | Out-Null }
    New-Item -ItemType Directory -Path (Join-Path $ws '.git\hooks') | Out-Null
    $r = Rf @('run', '--', $h, 'write', (Join-Path $ws '.git\hooks\pre-commit'))
    Check 'a protected path (.git\hooks) is not writable' ($r.Code -ne 0) $r.Out
    $label = icacls $ws | Out-String
    Check 'the workspace carries the low mandatory label' ($label -match 'Low Mandatory Level') $label
    $r = Rf @('run', '--', $h, 'write-in', 'APPDATA')
    Check 'the redirected APPDATA is writable' ($r.Code -eq 0) $r.Out
    $r = Rf @('run', '--', $h, 'write-in', 'TEMP')
    Check 'the redirected TEMP is writable' ($r.Code -eq 0) $r.Out

    # The job's limits, which wine does not implement.
    $r = Rf @('run', '--pids', '1', '--', 'cmd', '/c', 'cmd /c exit 5')
    Check 'pids 1: a second process cannot start' ($r.Code -ne 5) "got $($r.Code)"
    $r = Rf @('run', '--memory', '64M', '--', 'powershell', '-NoProfile', '-Command',
              '$a = New-Object byte[] (256MB); $a[0] = 1; exit 0')
    Check 'memory 64M: allocating 256 MB fails' ($r.Code -ne 0) "got $($r.Code)"
    $sw = [Diagnostics.Stopwatch]::StartNew()
    $r = Rf @('run', '--timeout', '2', '--', $h, 'sleeper', (Join-Path $ws 'timeout.pid'))
    Check 'timeout 2: exit 124 within 10 s' ($r.Code -eq 124 -and $sw.Elapsed.TotalSeconds -lt 10) "got $($r.Code)"
    $cpus = [Environment]::ProcessorCount
    $sw = [Diagnostics.Stopwatch]::StartNew()
    $r = Rf @('run', '--cpu', '0.1', '--', 'powershell', '-NoProfile', '-Command',
              '$p = Get-Process -Id $PID; $s = [DateTime]::Now; while (([DateTime]::Now - $s).TotalSeconds -lt 3) {}; [int]($p.TotalProcessorTime.TotalMilliseconds)')
    $used = [int](($r.Out -split "`n" | Where-Object { $_ -match '^\d+' } | Select-Object -Last 1))
    Check "cpu 0.1: a 3 s busy loop gets well under 3 s of CPU ($used ms on $cpus CPUs)" ($used -lt 2000) $r.Out

    # The job's UI restrictions: the user's clipboard is out of reach.
    Set-Clipboard -Value 'rf-check-secret'
    $r = Rf @('run', '--', 'powershell', '-NoProfile', '-Command', 'Get-Clipboard')
    Check "the clipboard is not readable" (-not ($r.Out -match 'rf-check-secret')) $r.Out

    # The whole tree dies with ringfence: kill it, the grandchild goes too.
    $pidFile = Join-Path $ws 'grandchild.pid'
    $p = Start-Process -FilePath $Ringfence -ArgumentList @('run', '--', $h, 'tree', $pidFile) -PassThru -WindowStyle Hidden
    for ($i = 0; $i -lt 40 -and -not (Test-Path $pidFile); $i++) { Start-Sleep -Milliseconds 250 }
    Start-Sleep -Milliseconds 250
    $gpid = [int](Get-Content $pidFile | Select-Object -First 1)
    Stop-Process -Id $p.Id -Force
    Start-Sleep -Seconds 1
    Check 'the grandchild dies when ringfence is killed' (-not (Get-Process -Id $gpid -ErrorAction SilentlyContinue)) "pid $gpid"

    $r = Rf @('doctor')
    Check 'doctor: token, job and label work' ($r.Code -eq 0) $r.Out
} finally {
    Pop-Location
    Remove-Item -Recurse -Force $ws -ErrorAction SilentlyContinue
}
Write-Output "$failures failed"
exit $failures
